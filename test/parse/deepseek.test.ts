import { parseToolCalls } from '../../src/parse';
import { callsOf, expectNoCalls } from './parse-helpers';

/** DeepSeek's token with fullwidth bars (U+FF5C); `▁` is U+2581. */
const t = (word: string): string => `<\uff5c${word}\uff5c>`;
const BEGIN = t('tool▁calls▁begin');
const END = t('tool▁calls▁end');
/** A V3 / R1 call: the type, the name on its line, the arguments in a fence. */
const v3 = (name: string, args: string): string => `${t('tool▁call▁begin')}function${t('tool▁sep')}${name}\n\`\`\`json\n${args}\n\`\`\`${t('tool▁call▁end')}`;
/** A V3.1 call: the name, then the arguments. */
const v31 = (name: string, args: string): string => `${t('tool▁call▁begin')}${name}${t('tool▁sep')}${args}${t('tool▁call▁end')}`;

describe('DeepSeek calls', () => {
  it('reads a V3 / R1 call, its format and the text around it', () => {
    expect(parseToolCalls(`${BEGIN}${v3('get_weather', '{"city": "Paris"}')}${END}`)).toEqual({
      calls: [{ id: expect.stringMatching(/^call_[A-Za-z0-9]{24}$/), name: 'get_weather', arguments: '{"city":"Paris"}' }],
      remainingText: '',
      format: 'deepseek',
    });
    const result = parseToolCalls(`Let me check.\n\n${BEGIN}\n${v3('get_weather', '{"city":"Paris"}')}\n${END}<\uff5cend▁of▁sentence\uff5c>`);
    expect(result.remainingText).toBe('Let me check.\n\n<\uff5cend▁of▁sentence\uff5c>');
  });

  it('reads V3.1 calls, several in order', () => {
    const text = `${BEGIN}${v31('get_weather', '{"city":"Paris"}')}${v31('function', '{"x":1}')}${END}`;
    expect(parseToolCalls(text)).toMatchObject({ calls: [{ name: 'get_weather', arguments: '{"city":"Paris"}' }, { name: 'function', arguments: '{"x":1}' }], remainingText: '' });
  });

  it('reads the tokens written with ASCII bars, a V3 call with no fence, and a call with no section tokens', () => {
    const ascii = '<|tool▁calls▁begin|><|tool▁call▁begin|>get_weather<|tool▁sep|>{"city":"Paris"}<|tool▁call▁end|><|tool▁calls▁end|>';
    expect(parseToolCalls(ascii)).toMatchObject({ calls: [{ name: 'get_weather' }], remainingText: '', format: 'deepseek' });
    expect(callsOf(`${t('tool▁call▁begin')}function${t('tool▁sep')}f\n{"a":1}${t('tool▁call▁end')}`)).toEqual([['f', '{"a":1}']]);
    expect(callsOf(v31('f', '{}'))).toEqual([['f', '{}']]);
  });

  it('does not take a malformed header for a call', () => {
    expectNoCalls(`${BEGIN}${t('tool▁call▁begin')}get weather${t('tool▁sep')}{}${t('tool▁call▁end')}${END}`);
    expectNoCalls(`${BEGIN}${t('tool▁call▁begin')}get_weather{"city":"Paris"}${t('tool▁call▁end')}${END}`);
    expectNoCalls(v31('f', '["a"]'));
  });

  it('returns only offered tools, and leaves the others in the text', () => {
    const text = `${BEGIN}${v31('a', '{"x":1}')}${v31('b', '{"y":2}')}${END}`;
    expect(parseToolCalls(text, ['b'])).toMatchObject({ calls: [{ name: 'b' }], remainingText: `${BEGIN}${v31('a', '{"x":1}')}` });
    expectNoCalls(text, ['c']);
  });

  it('returns at most maxCalls calls and leaves the rest in the text', () => {
    const one = v31('a', '{}');
    const result = parseToolCalls(`${BEGIN}${one}${one}${one}${END}`, [], { maxCalls: 2 });
    expect(result.calls).toHaveLength(2);
    expect(result.remainingText).toBe(`${one}${END}`);
  });

  it.each([
    ['inside the arguments', `${BEGIN}${t('tool▁call▁begin')}f${t('tool▁sep')}{"city":"Par`],
    ['in the fence of a V3 call', `${BEGIN}${t('tool▁call▁begin')}function${t('tool▁sep')}f\n\`\`\`json\n{"a":`],
    ['after the separator', `${BEGIN}${t('tool▁call▁begin')}f${t('tool▁sep')}`],
    ['inside the name', `${BEGIN}${t('tool▁call▁begin')}get_wea`],
  ])('does not take output cut off %s for a call', (_where, text) => {
    expectNoCalls(text);
  });

  it('leaves a call cut off after a complete one in the text', () => {
    const cut = `${t('tool▁call▁begin')}b${t('tool▁sep')}{"y":"tw`;
    expect(parseToolCalls(`${BEGIN}${v31('a', '{}')}${cut}`)).toMatchObject({ calls: [{ name: 'a' }], remainingText: cut });
  });

  it('supplies a brace dropped before the closing token, and does not take tokens quoted in arguments for calls', () => {
    expect(callsOf(`${t('tool▁call▁begin')}a${t('tool▁sep')}{"x":{"y":1}${t('tool▁call▁end')}`)).toEqual([['a', '{"x":{"y":1}}']]);
    const quoted = JSON.stringify({ text: `${t('tool▁call▁end')}${v31('rm', '{}')}` });
    expect(callsOf(`${BEGIN}${v31('write', quoted)}${END}`)).toEqual([['write', quoted]]);
  });

  it('ignores calls drafted in reasoning', () => {
    expectNoCalls(`<think>\nMaybe ${BEGIN}${v31('rm', '{}')}${END}\n</think>`);
    const result = parseToolCalls(`<think>\n${v31('rm', '{}')}\n</think>\n\n${BEGIN}${v3('get_weather', '{"city":"Paris"}')}${END}`);
    expect(result.calls.map((c) => c.name)).toEqual(['get_weather']);
  });
});

describe('DeepSeek call headers with spaces', () => {
  it('reads a V3.1 call with a space before or after the name, and a V3 call with one before it', () => {
    expect(callsOf(`${t('tool▁call▁begin')} get_weather${t('tool▁sep')}{"city":"Paris"}${t('tool▁call▁end')}`)).toEqual([['get_weather', '{"city":"Paris"}']]);
    expect(callsOf(`${t('tool▁call▁begin')}get_weather ${t('tool▁sep')}{"city":"Paris"}${t('tool▁call▁end')}`)).toEqual([['get_weather', '{"city":"Paris"}']]);
    expect(callsOf(`${BEGIN}${t('tool▁call▁begin')}function${t('tool▁sep')} get_weather\n\`\`\`json\n{}\n\`\`\`${t('tool▁call▁end')}${END}`)).toEqual([['get_weather', '{}']]);
  });
});
