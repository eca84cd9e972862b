import { parseToolCalls } from '../../src/parse';
import { callsOf, expectNoCalls } from './parse-helpers';

// Kimi K3 writes its calls in XTML channels; before, ParseToolCalls found no call in them
// (format none). vLLM's kimi_k3 parser is the reference.

const arg = (key: string, type: string, value: string): string => `<|open|>argument key="${key}" type="${type}"<|sep|>${value}<|close|>argument<|sep|>`;
const call = (tool: string, ...args: string[]): string => `<|open|>call tool="${tool}" index="1"<|sep|>\n${args.map((a) => `  ${a}\n`).join('')}<|close|>call<|sep|>`;
const tools = (...calls: string[]): string => `<|open|>tools<|sep|>\n${calls.join('\n')}\n<|close|>tools<|sep|>`;

describe('Kimi K3 XTML calls', () => {
  it('reads the calls of the tools channel, typed values, and the text around them', () => {
    const text = `<|open|>response<|sep|>Checking.<|close|>response<|sep|>${tools(call('get_weather', arg('city', 'string', 'Tokyo'), arg('days', 'integer', '3'), arg('opts', 'object', '{"a": [1, 2]}')), call('get_time'))}`;
    expect(parseToolCalls(text)).toEqual({
      calls: [
        { id: expect.stringMatching(/^call_/), name: 'get_weather', arguments: '{"city":"Tokyo","days":3,"opts":{"a":[1,2]}}' },
        { id: expect.stringMatching(/^call_/), name: 'get_time', arguments: '{}' },
      ],
      remainingText: '<|open|>response<|sep|>Checking.<|close|>response<|sep|>',
      format: 'kimi_xtml',
    });
  });

  it('keeps a string value raw (a number, a tag, quotes), unescapes attributes, and reads malformed JSON as text', () => {
    const text = tools(call('write', arg('zip', 'string', '02134'), arg('body', 'string', 'a <think> "b"\n'), arg('n', 'number', '{oops'), '<|open|>argument key="say &quot;hi&quot; &amp; go" type="string"<|sep|>x<|close|>argument<|sep|>'));
    expect(callsOf(text)).toEqual([['write', JSON.stringify({ zip: '02134', body: 'a <think> "b"\n', n: '{oops', 'say "hi" & go': 'x' })]]);
  });

  it('reads a channel whose closing token was cut off, but no call outside the channel, nor one cut off', () => {
    expect(callsOf(`<|open|>tools<|sep|>${call('a')}`)).toEqual([['a', '{}']]);
    expectNoCalls(call('a'));
    expectNoCalls(`<|open|>tools<|sep|><|open|>call tool="a"<|sep|>${'<|open|>argument key="x" type="string"<|sep|>open'}`);
    expectNoCalls('<|open|>tools<|sep|><|open|>call index="1"<|sep|><|close|>call<|sep|>');
  });

  it('returns only offered tools', () => {
    expect(callsOf(tools(call('rm'), call('ok')), ['ok'])).toEqual([['ok', '{}']]);
  });
});
