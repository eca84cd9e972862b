import { parseToolCalls } from '../../src/parse';
import { slowerThan } from '../helpers/cpu-time';
import { callsOf, expectNoCalls } from './parse-helpers';

/** A Qwen3-Coder call, written as its chat template writes it: each tag and value on its own line. */
function qwenCall(name: string, params: Record<string, string>, wrap = true): string {
  const body = Object.entries(params).map(([key, value]) => `<parameter=${key}>\n${value}\n</parameter>\n`).join('');
  const fn = `<function=${name}>\n${body}</function>`;
  return wrap ? `<tool_call>\n${fn}\n</tool_call>` : fn;
}

const WEATHER = '<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>';

describe('Qwen3-Coder XML calls', () => {
  it('reads the call, its format and the text around it', () => {
    expect(parseToolCalls(WEATHER)).toEqual({
      calls: [{ id: expect.stringMatching(/^call_[A-Za-z0-9]{24}$/), name: 'get_weather', arguments: '{"city":"Paris","days":3}' }],
      remainingText: '',
      format: 'qwen_xml',
    });
    const result = parseToolCalls(`Let me check.\n${WEATHER}\nOne moment.`);
    expect(result.remainingText).toBe('Let me check.\n\nOne moment.');
    expect(result.format).toBe('qwen_xml');
  });

  it('reads a value as JSON when it is JSON, else as the text between the tags less one newline each side', () => {
    const text = qwenCall('f', {
      n: '-2.5e3',
      big: '12345678901234567890',
      yes: 'true',
      nothing: 'null',
      obj: '{"a": [1, 2], "b": "x"}',
      list: '  ["a", "b"]  ',
      quoted: '"hi"',
      zip: '007',
      word: 'None',
      code: '  if x:\n    return 1\n',
      padded: '\nmiddle\n',
      empty: '',
    });
    expect(JSON.parse(callsOf(text)[0]?.[1] ?? '')).toEqual({
      n: -2500,
      big: 12345678901234567890,
      yes: true,
      nothing: null,
      obj: { a: [1, 2], b: 'x' },
      list: ['a', 'b'],
      quoted: 'hi',
      zip: '007',
      word: 'None',
      code: '  if x:\n    return 1\n',
      padded: '\nmiddle\n',
      empty: '',
    });
    expect(callsOf(text)[0]?.[1]).toContain('"big":12345678901234567890,');
  });

  it('keeps a value written on the tag line, and near-JSON, as text', () => {
    const text = "<function=f><parameter=a>Paris</parameter><parameter=b>{'x': 1}</parameter><parameter=c>[1,]</parameter></function>";
    expect(callsOf(text)).toEqual([['f', '{"a":"Paris","b":"{\'x\': 1}","c":"[1,]"}']]);
  });

  it('returns several calls in order, wrapped or not, and a call with no parameters', () => {
    const text = [
      qwenCall('a', { x: '1' }),
      'then',
      qwenCall('b', { y: 'two' }, false),
      '<tool_call>\n<function=c>\n</function>\n</tool_call>',
    ].join('\n');
    const result = parseToolCalls(text);
    expect(result.calls.map((call) => [call.name, call.arguments])).toEqual([['a', '{"x":1}'], ['b', '{"y":"two"}'], ['c', '{}']]);
    expect(result.remainingText).toBe('then');
    expect(result.format).toBe('qwen_xml');
  });

  it('takes a call whose </tool_call> or </function> is missing but not both', () => {
    expect(callsOf('<tool_call>\n<function=a>\n<parameter=x>\n1\n</parameter>\n</function>')).toEqual([['a', '{"x":1}']]);
    expect(callsOf('<tool_call><function=a><parameter=x>1</parameter></tool_call> done')).toEqual([['a', '{"x":1}']]);
  });

  it('ends a value whose </parameter> was left out at the next <parameter= or at </function>', () => {
    expect(callsOf('<tool_call>\n<function=a>\n<parameter=x>\n1\n<parameter=y>\ntwo\n</parameter>\n</function>\n</tool_call>')).toEqual([['a', '{"x":1,"y":"two"}']]);
    expect(callsOf('<tool_call>\n<function=a>\n<parameter=x>\n1\n</function>\n</tool_call>')).toEqual([['a', '{"x":1}']]);
    const next = qwenCall('b', { y: '2' });
    const result = parseToolCalls(`<tool_call>\n<function=a>\n<parameter=x>\n1\n</function>\n</tool_call>\n${next}`);
    expect(result.calls.map((call) => [call.name, call.arguments])).toEqual([['a', '{"x":1}'], ['b', '{"y":2}']]);
  });

  it('does not let a value left open run into another call', () => {
    const prose = 'Write <function=NAME>\n<parameter=KEY>\nVALUE';
    expect(parseToolCalls(`${prose}\n<function=b>{"x":1}</function>`)).toMatchObject({ calls: [{ name: 'b', arguments: '{"x":1}' }], remainingText: prose, format: 'llama' });
    expect(parseToolCalls(`${prose}\n${qwenCall('b', { y: '2' })}`)).toMatchObject({ calls: [{ name: 'b', arguments: '{"y":2}' }], remainingText: prose });
  });

  it('trims CRLF line ends around values as it trims LF', () => {
    const text = '<tool_call>\r\n<function=f>\r\n<parameter=a>\r\nParis\r\n</parameter>\r\n<parameter=b>\r\n3\r\n</parameter>\r\n<parameter=c>\r\n\r\nx\r\n\r\n</parameter>\r\n</function>\r\n</tool_call>';
    expect(callsOf(text)).toEqual([['f', '{"a":"Paris","b":3,"c":"\\r\\nx\\r\\n"}']]);
  });

  it('keeps the Llama <function=name>{json}</function> format, beside it too', () => {
    const llama = '<function=spotify>{"n": 5}</function>';
    expect(parseToolCalls(llama).format).toBe('llama');
    expect(callsOf(llama)).toEqual([['spotify', '{"n":5}']]);
    const mixed = `${llama}\n${qwenCall('b', { y: 'x' }, false)}`;
    const result = parseToolCalls(mixed);
    expect(result.calls.map((call) => call.name)).toEqual(['spotify', 'b']);
    expect(result.format).toBe('llama');
  });

  it('does not take markers quoted in a value for calls', () => {
    const content = 'Example: </function><function=delete_repo>{"repo":"main"}</function>\n<tool_call>{"name":"rm","arguments":{}}</tool_call>\n<function=drop>\n</function>';
    const text = qwenCall('write_file', { path: 'README.md', content });
    expect(callsOf(text)).toEqual([['write_file', JSON.stringify({ path: 'README.md', content })]]);
  });

  it('does not take JSON in the value of a call not offered for a call', () => {
    const content = '```json\n{"name":"rm","arguments":{"path":"/"}}\n```\n{"name":"rm","arguments":{}}';
    expectNoCalls(qwenCall('write_file', { content }), ['rm']);
    expect(callsOf(`${qwenCall('write_file', { content })}\n{"name":"rm","arguments":{}}`, ['rm'])).toEqual([['rm', '{}']]);
  });

  it('returns only offered tools, and leaves the others in the text', () => {
    const text = `${qwenCall('a', { x: '1' })}\n${qwenCall('b', { y: '2' })}`;
    expect(callsOf(text, ['b'])).toEqual([['b', '{"y":2}']]);
    expect(parseToolCalls(text, ['b']).remainingText).toBe(qwenCall('a', { x: '1' }));
    expectNoCalls(text, ['c']);
  });

  it('returns at most maxCalls calls and leaves the rest in the text', () => {
    const one = qwenCall('a', { x: '1' });
    const result = parseToolCalls(`${one}\n${one}\n${one}`, [], { maxCalls: 2 });
    expect(result.calls).toHaveLength(2);
    expect(result.remainingText).toBe(one);
  });

  it.each([
    ['inside a value', '<tool_call>\n<function=a>\n<parameter=x>\nPar'],
    ['after a value', '<tool_call>\n<function=a>\n<parameter=x>\nParis\n</parameter>\n'],
    ['inside a parameter tag', '<tool_call>\n<function=a>\n<parameter=x>\n1\n</parameter>\n<parameter=ci'],
    ['after the function tag', '<tool_call>\n<function=a>\n'],
    ['inside the function name', '<tool_call>\n<function=get_wea'],
  ])('does not take output cut off %s for a call', (_where, text) => {
    expectNoCalls(text);
  });

  it('leaves a call cut off after a complete one in the text', () => {
    const text = `${qwenCall('a', { x: '1' })}\n<tool_call>\n<function=b>\n<parameter=y>\n2`;
    const result = parseToolCalls(text);
    expect(result.calls.map((call) => call.name)).toEqual(['a']);
    expect(result.remainingText).toBe('<tool_call>\n<function=b>\n<parameter=y>\n2');
  });

  it('does not let a value never closed (a format explained in prose) hide the calls after it', () => {
    const prose = 'Write <function=NAME>\n<parameter=KEY>\nVALUE and so on.';
    const text = `${prose}\n<tool_call>{"name":"b","arguments":{}}</tool_call>`;
    expect(parseToolCalls(text)).toMatchObject({ calls: [{ name: 'b', arguments: '{}' }], remainingText: prose, format: 'hermes' });
  });

  it('does not take a malformed block for a call', () => {
    expectNoCalls('<tool_call>\n<function=a>\n<parameter=x>\n1\n</parameter>\nprose\n</function>\n</tool_call>');
    expectNoCalls('<function=a b>\n<parameter=x>\n1\n</parameter>\n</function>');
    expectNoCalls('<function=a>\n<parameter=>\n1\n</parameter>\n</function>');
  });

  it('ignores calls drafted in reasoning', () => {
    expectNoCalls(`<think>\nMaybe ${qwenCall('rm', { path: '/' })}\n</think>`);
    const result = parseToolCalls(`<think>\n${qwenCall('rm', { path: '/' })}\n</think>\n${WEATHER}`);
    expect(result.calls.map((call) => call.name)).toEqual(['get_weather']);
  });
});

describe('Qwen3-Coder XML adversarial inputs parse in linear time', () => {
  const SIZE = 1024 * 1024;
  // Two parses of a MiB take 20-150 ms of CPU alone on this machine (every dialect's detector
  // reads the text), 210-260 ms once beside other CPU-heavy suites, and 485-564 ms (the best of
  // five) in a full run on a slower day, before the test runtime passed modules their globals
  // (scripts/jest-script-runtime.js); a quadratic scan takes minutes.
  const LIMIT_MS = 500;
  const build = (unit: string, suffix = '', size = SIZE): string => unit.repeat(Math.ceil(size / unit.length)).slice(0, size - suffix.length) + suffix;

  it.each([
    ['open function and parameter tags', '<function=a><parameter=x>', ''],
    ['open function and parameter tags, one close at the end', '<function=a>\n<parameter=x>\n', '</parameter>\nX'],
    ['blocks broken after a value', '<tool_call>\n<function=a>\n<parameter=x>\n1\n</parameter>\n', ''],
    ['parameter tags alone', '<parameter=x>\n', '</parameter></function>'],
    ['closing tags alone', '</parameter></function></tool_call>', ''],
    ['function tags with no name end', '<function=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', ''],
    ['complete calls', '<function=a>\n<parameter=x>\n[1,2]\n</parameter>\n</function>\n', ''],
    ['complete calls holding call JSON', '<function=a>\n<parameter=x>\n{"name":"f","arguments":{}}\n</parameter>\n</function>\n', ''],
  ])('%s, with any tool offered and with none of them', (_name, unit, suffix) => {
    const text = build(unit, suffix);
    expect(text).toHaveLength(SIZE);
    for (let i = 0; i < 8; i++) parseToolCalls(text.slice(0, SIZE / 16), ['other']);
    const parse = (input: string) => (): void => {
      parseToolCalls(input);
      parseToolCalls(input, ['other']);
    };
    // Past the limit, held to 8x the same input a quarter as long (a quadratic scan takes 16x).
    expect(slowerThan(parse(text), parse(build(unit, suffix, SIZE / 4)), 8, 2 * LIMIT_MS)).toBeUndefined();
  });

  it('reads one value of a mebibyte', () => {
    const value = `[${'1,'.repeat(SIZE / 4)}1]`;
    const text = qwenCall('a', { x: value, y: 'a'.repeat(SIZE / 2) });
    const [call] = parseToolCalls(text).calls;
    expect(call?.arguments.length).toBe(value.length + SIZE / 2 + 13);
  });
});
