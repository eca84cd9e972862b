import { parseToolCalls } from '../../src/parse';
import { callsOf, expectNoCalls } from './parse-helpers';

// MiniMax-M2 (and M2.1, M2.5) writes its calls as plain XML in a <minimax:tool_call> block; before,
// ParseToolCalls found no call in them (format none, the whole text remaining).

const BEGIN = '<minimax:tool_call>';
const END = '</minimax:tool_call>';
const param = (key: string, value: string): string => `<parameter name="${key}">${value}</parameter>`;
/** A call as MiniMax's chat template asks for it: each parameter on a line of its own. */
const invoke = (name: string, ...params: string[]): string => `<invoke name="${name}">\n${params.map((p) => `${p}\n`).join('')}</invoke>`;
const block = (...calls: string[]): string => `${BEGIN}\n${calls.join('\n')}\n${END}`;

const WEATHER = invoke('get_weather', param('location', 'San Francisco'), param('unit', 'celsius'));

describe('MiniMax-M2 calls', () => {
  it('reads the call, its format and the text around it', () => {
    expect(parseToolCalls(`Let me check.\n${block(WEATHER)}`)).toEqual({
      calls: [{ id: expect.stringMatching(/^call_[A-Za-z0-9]{24}$/), name: 'get_weather', arguments: '{"location":"San Francisco","unit":"celsius"}' }],
      remainingText: 'Let me check.',
      format: 'minimax_xml',
    });
  });

  it('reads several calls of one block in order, and a call with no parameters', () => {
    const text = block(invoke('a', param('x', '1')), invoke('b'), invoke('a', param('x', '2')));
    expect(callsOf(text)).toEqual([['a', '{"x":1}'], ['b', '{}'], ['a', '{"x":2}']]);
    expect(callsOf(`${block(invoke('a'))}\nand\n${block(invoke('b'))}`)).toEqual([['a', '{}'], ['b', '{}']]);
  });

  it('reads a block whose closing tag was cut off', () => {
    expect(parseToolCalls(`${BEGIN}\n${WEATHER}\n${invoke('b')}`)).toMatchObject({ calls: [{ name: 'get_weather' }, { name: 'b' }], remainingText: '' });
  });

  it('takes no <invoke> outside a block for a call: XML in prose, or after the block', () => {
    expectNoCalls(`Use ${WEATHER} to ask.`);
    expectNoCalls(`<root>\n${WEATHER}\n</root>`);
    expect(parseToolCalls(`${block(invoke('a'))}\n${invoke('b')}`)).toMatchObject({ calls: [{ name: 'a' }], remainingText: invoke('b') });
    // After the block's calls, text ends the block even with its closing tag left out.
    expect(parseToolCalls(`${BEGIN}\n${invoke('a')}\nthen\n${invoke('b')}`)).toMatchObject({ calls: [{ name: 'a' }], remainingText: `then\n${invoke('b')}` });
  });

  it('reads a value as JSON when it is strict JSON, less one line end each side, else as its text', () => {
    const text = block(
      invoke(
        'f',
        param('query_tag', '["technology", "events"]'),
        param('n', '-2.50'),
        param('yes', 'true'),
        param('zip', '007'),
        param('word', 'None'),
        param('code', '\n  x = 1\n\n'),
        param('quoted', '["\\"OpenAI\\" \\"latest\\""]'),
      ),
    );
    expect(callsOf(text)).toEqual([['f', '{"query_tag":["technology","events"],"n":-2.50,"yes":true,"zip":"007","word":"None","code":"  x = 1\\n","quoted":["\\"OpenAI\\" \\"latest\\""]}']]);
  });

  it('does not take tags quoted in a value for calls, nor for its end', () => {
    const content = `${block(invoke('rm'))} <tool_call>{"name":"rm","arguments":{}}</tool_call> </parameter> and on`;
    expect(callsOf(block(invoke('write', param('content', content), param('path', 'x.md'))))).toEqual([['write', JSON.stringify({ content, path: 'x.md' })]]);
  });

  it('takes a call cut off, or with a broken tag, for none', () => {
    expectNoCalls(`${BEGIN}\n<invoke name="a">\n${param('x', '1')}\n`);
    expectNoCalls(`${BEGIN}\n<invoke name="a">\n<parameter name="x">1`);
    expectNoCalls(`${BEGIN}\n<invoke name=a>\n</invoke>`);
    expectNoCalls(`${BEGIN}\n<invoke>\n</invoke>`);
  });

  it('ignores a call drafted in reasoning, and a reasoning tag quoted in a value', () => {
    const draft = `<think>I could call ${block(invoke('rm'))}</think>`;
    expect(parseToolCalls(`${draft}\n${block(WEATHER)}`)).toMatchObject({ calls: [{ name: 'get_weather' }], remainingText: draft });
    const content = 'a <think> tag, then </think>';
    expect(callsOf(block(invoke('write', param('content', content))))).toEqual([['write', JSON.stringify({ content })]]);
  });

  it('returns only offered tools, and JSON in a value is no call of its own', () => {
    const text = block(invoke('rm', param('path', '/')), WEATHER);
    expect(callsOf(text, ['get_weather'])).toEqual([['get_weather', '{"location":"San Francisco","unit":"celsius"}']]);
    const fenced = block(invoke('write', param('content', '```json\n{"name": "rm", "arguments": {"path": "/"}}\n```')));
    expect(callsOf(fenced, ['rm'])).toEqual([]);
  });

  it('returns MiniMax calls in text order beside another dialect', () => {
    const text = `<tool_call>{"name": "a", "arguments": {}}</tool_call>\n${block(invoke('b'))}`;
    expect(parseToolCalls(text)).toMatchObject({ calls: [{ name: 'a' }, { name: 'b' }], format: 'hermes' });
  });
});
