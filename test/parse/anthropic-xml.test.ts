import { parseToolCalls } from '../../src/parse';
import { callsOf, expectNoCalls } from './parse-helpers';

// Anthropic's prompt format for calls (Claude's before native tool use, which prompted open models
// copy): MiniMax's plain tags in a <function_calls> block. Before, format none.

const param = (key: string, value: string): string => `<parameter name="${key}">${value}</parameter>`;
const invoke = (name: string, ...params: string[]): string => `<invoke name="${name}">\n${params.map((p) => `${p}\n`).join('')}</invoke>`;
const block = (...calls: string[]): string => `<function_calls>\n${calls.join('\n')}\n</function_calls>`;

describe("Anthropic's <function_calls> calls", () => {
  it('reads the calls of the block in order, values as MiniMax reads them', () => {
    expect(parseToolCalls(`I'll check.\n${block(invoke('get_weather', param('city', 'Paris'), param('days', '3')), invoke('get_time'))}`)).toEqual({
      calls: [
        { id: expect.stringMatching(/^call_/), name: 'get_weather', arguments: '{"city":"Paris","days":3}' },
        { id: expect.stringMatching(/^call_/), name: 'get_time', arguments: '{}' },
      ],
      remainingText: "I'll check.",
      format: 'anthropic_xml',
    });
  });

  it("keeps Olmo 3's pythonic block its own, and reads no <invoke> outside a block", () => {
    expect(parseToolCalls('<function_calls>\nget_weather(city="Paris")\n</function_calls>')).toMatchObject({ calls: [{ name: 'get_weather' }], format: 'pythonic' });
    expectNoCalls(`Use ${invoke('x', param('a', '1'))} like this.`);
  });

  it('takes a reasoning tag in a value for the value, and a call drafted in reasoning for none', () => {
    const content = 'a <think> tag, then </think>';
    expect(callsOf(block(invoke('write', param('content', content))))).toEqual([['write', JSON.stringify({ content })]]);
    const draft = `<think>${block(invoke('rm'))}</think>`;
    expect(parseToolCalls(`${draft}\n${block(invoke('ok'))}`)).toMatchObject({ calls: [{ name: 'ok' }], remainingText: draft });
  });
});
