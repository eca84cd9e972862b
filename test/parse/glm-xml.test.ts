import { parseToolCalls } from '../../src/parse';
import { callsOf, expectNoCalls } from './parse-helpers';

/** A GLM-4.5 call as its chat template writes it: the name, then each key and value on a line. */
function glmCall(name: string, args: Record<string, string>): string {
  const body = Object.entries(args).map(([key, value]) => `<arg_key>${key}</arg_key>\n<arg_value>${value}</arg_value>\n`).join('');
  return `<tool_call>${name}\n${body}</tool_call>`;
}

const WEATHER = glmCall('get_weather', { city: 'Paris', days: '3' });

describe('GLM-4.5 XML calls', () => {
  it('reads the call, its format and the text around it', () => {
    expect(parseToolCalls(WEATHER)).toEqual({
      calls: [{ id: expect.stringMatching(/^call_[A-Za-z0-9]{24}$/), name: 'get_weather', arguments: '{"city":"Paris","days":3}' }],
      remainingText: '',
      format: 'glm_xml',
    });
    expect(parseToolCalls(`Let me check.\n${WEATHER}\nOne moment.`).remainingText).toBe('Let me check.\n\nOne moment.');
  });

  it('reads a value as JSON when it is JSON, else as text, and trims keys', () => {
    const text = glmCall('f', { n: '-2.5', obj: '{"a": [1]}', yes: 'true', zip: '007', word: 'None', code: '  x = 1\n', ' padded ': 'a' });
    expect(JSON.parse(callsOf(text)[0]?.[1] ?? '')).toEqual({ n: -2.5, obj: { a: [1] }, yes: true, zip: '007', word: 'None', code: '  x = 1', padded: 'a' });
  });

  it('reads GLM-4.7 calls written with no line ends, a call with no arguments, and several in order', () => {
    const text = '<tool_call>a<arg_key>x</arg_key><arg_value>1</arg_value></tool_call>then<tool_call>b</tool_call>\n<tool_call>c\n</tool_call>';
    expect(parseToolCalls(text)).toMatchObject({ calls: [{ name: 'a', arguments: '{"x":1}' }, { name: 'b', arguments: '{}' }, { name: 'c', arguments: '{}' }], remainingText: 'then' });
  });

  it('leaves Hermes calls to Hermes, beside GLM calls too', () => {
    const hermes = '<tool_call>\n{"name": "get_time", "arguments": {"tz": "UTC"}}\n</tool_call>';
    expect(parseToolCalls(hermes)).toMatchObject({ calls: [{ name: 'get_time', arguments: '{"tz":"UTC"}' }], format: 'hermes' });
    const result = parseToolCalls(`${hermes}\n${WEATHER}`);
    expect(result.calls.map((c) => c.name)).toEqual(['get_time', 'get_weather']);
    expect(result.format).toBe('hermes');
    expect(parseToolCalls(`${WEATHER}\n${hermes}`).format).toBe('glm_xml');
  });

  it('does not take content that is not a bare name then <arg_key> or </tool_call> for a call', () => {
    expectNoCalls('<tool_call>get_weather Paris</tool_call>');
    expectNoCalls('<tool_call>get_weather\ncity: Paris\n</tool_call>');
    expectNoCalls('<tool_call>\n</tool_call>');
    expectNoCalls('<tool_call>a<arg_key>x</arg_key>1</tool_call>');
    expectNoCalls('<tool_call>a<arg_key>x</arg_key><arg_value>1</arg_value>prose</tool_call>');
  });

  it('does not take markers quoted in a value for calls', () => {
    const content = '</tool_call><tool_call>rm</tool_call> and <tool_call>{"name":"rm","arguments":{}}</tool_call>';
    expect(callsOf(glmCall('write', { content }))).toEqual([['write', JSON.stringify({ content })]]);
  });

  it('does not take JSON in the value of a call not offered for a call', () => {
    const content = '```json\n{"name":"rm","arguments":{"path":"/"}}\n```';
    expectNoCalls(glmCall('write', { content }), ['rm']);
  });

  it('returns only offered tools, and leaves the others in the text', () => {
    const text = `${glmCall('a', { x: '1' })}\n${glmCall('b', { y: '2' })}`;
    expect(parseToolCalls(text, ['b'])).toMatchObject({ calls: [{ name: 'b', arguments: '{"y":2}' }], remainingText: glmCall('a', { x: '1' }) });
    expectNoCalls(text, ['c']);
  });

  it('returns at most maxCalls calls and leaves the rest in the text', () => {
    const result = parseToolCalls(`${WEATHER}\n${WEATHER}\n${WEATHER}`, [], { maxCalls: 2 });
    expect(result.calls).toHaveLength(2);
    expect(result.remainingText).toBe(WEATHER);
  });

  it.each([
    ['inside a value', '<tool_call>a\n<arg_key>x</arg_key>\n<arg_value>Par'],
    ['after a value', '<tool_call>a\n<arg_key>x</arg_key>\n<arg_value>Paris</arg_value>\n'],
    ['inside a key', '<tool_call>a\n<arg_key>ci'],
    ['after the name', '<tool_call>get_weather\n'],
  ])('does not take output cut off %s for a call', (_where, text) => {
    expectNoCalls(text);
  });

  it('leaves a call cut off after a complete one in the text', () => {
    const cut = '<tool_call>b\n<arg_key>y</arg_key>\n<arg_value>tw';
    expect(parseToolCalls(`${WEATHER}\n${cut}`)).toMatchObject({ calls: [{ name: 'get_weather' }], remainingText: cut });
  });

  it('ignores calls drafted in reasoning', () => {
    expectNoCalls(`<think>\nMaybe ${glmCall('rm', { path: '/' })}\n</think>`);
    const result = parseToolCalls(`<think>${glmCall('rm', { path: '/' })}</think>\n${WEATHER}`);
    expect(result.calls.map((c) => c.name)).toEqual(['get_weather']);
  });
});

describe('a GLM bare name that is a null', () => {
  it.each(['None', 'null'])('<tool_call>%s</tool_call> is no call, and stays in the text', (word) => {
    expectNoCalls(`<tool_call>${word}</tool_call>`);
    expectNoCalls(`I need no tool.\n<tool_call>\n${word}\n</tool_call>`);
    expect(parseToolCalls(`<tool_call>${word}</tool_call>\n${WEATHER}`)).toMatchObject({ calls: [{ name: 'get_weather' }], remainingText: `<tool_call>${word}</tool_call>` });
  });

  it('is a call when a tool of that exact name is offered, and other names stay calls', () => {
    expect(callsOf('<tool_call>None</tool_call>', ['None'])).toEqual([['None', '{}']]);
    expectNoCalls('<tool_call>None</tool_call>', ['null']);
    expect(callsOf('<tool_call>none</tool_call>')).toEqual([['none', '{}']]);
    expect(callsOf('<tool_call>None<arg_key>x</arg_key><arg_value>1</arg_value></tool_call>')).toEqual([['None', '{"x":1}']]);
  });
});
