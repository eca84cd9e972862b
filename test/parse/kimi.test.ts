import { parseToolCalls } from '../../src/parse';
import { callsOf, expectNoCalls } from './parse-helpers';

const BEGIN = '<|tool_calls_section_begin|>';
const END = '<|tool_calls_section_end|>';
/** A Kimi K2 call as its chat template writes it. */
const call = (id: string, args: string): string => `<|tool_call_begin|>${id}<|tool_call_argument_begin|>${args}<|tool_call_end|>`;

describe('Kimi K2 calls', () => {
  it('reads the call with the model\'s id, its format and the text around it', () => {
    expect(parseToolCalls(`${BEGIN}${call('functions.get_weather:0', '{"city": "Paris"}')}${END}`)).toEqual({
      calls: [{ id: 'functions.get_weather:0', name: 'get_weather', arguments: '{"city":"Paris"}' }],
      remainingText: '',
      format: 'kimi',
    });
    const result = parseToolCalls(`Let me check.${BEGIN}\n${call('functions.get_weather:0', '{}')}\n${END}`);
    expect(result.remainingText).toBe('Let me check.');
  });

  it('returns several calls in order, with spaces around the id', () => {
    const text = `${BEGIN}${call(' functions.a:0 ', '{"x":1}')}${call('functions.b:1', '{}')}${END}`;
    expect(parseToolCalls(text).calls).toEqual([
      { id: 'functions.a:0', name: 'a', arguments: '{"x":1}' },
      { id: 'functions.b:1', name: 'b', arguments: '{}' },
    ]);
  });

  it('keeps a dotted name whole, and names a call by an id with no prefix or no index', () => {
    expect(callsOf(call('functions.web.search:2', '{}'))).toEqual([['web.search', '{}']]);
    expect(parseToolCalls(call('get_weather:3', '{}')).calls).toEqual([{ id: 'get_weather:3', name: 'get_weather', arguments: '{}' }]);
    expect(parseToolCalls(call('functions.get_weather', '{}')).calls).toEqual([
      { id: expect.stringMatching(/^call_[A-Za-z0-9]{24}$/), name: 'get_weather', arguments: '{}' },
    ]);
  });

  it('gives a repeated id to the first call only', () => {
    const [first, second] = parseToolCalls(`${call('functions.a:0', '{}')}${call('functions.a:0', '{}')}`).calls;
    expect(first?.id).toBe('functions.a:0');
    expect(second?.id).toMatch(/^call_[A-Za-z0-9]{24}$/);
  });

  it('does not take a malformed header for a call', () => {
    expectNoCalls(`${BEGIN}<|tool_call_begin|>functions.a:0{"x":1}<|tool_call_end|>${END}`);
    expectNoCalls(call('functions.a b:0', '{}'));
    expectNoCalls(call('', '{}'));
  });

  it('returns only offered tools, and leaves the others in the text', () => {
    const text = `${BEGIN}${call('functions.a:0', '{}')}${call('functions.b:1', '{}')}${END}`;
    expect(parseToolCalls(text, ['a'])).toMatchObject({ calls: [{ name: 'a' }], remainingText: `${call('functions.b:1', '{}')}${END}` });
    expectNoCalls(text, ['c']);
  });

  it('returns at most maxCalls calls and leaves the rest in the text', () => {
    const text = `${BEGIN}${call('functions.a:0', '{}')}${call('functions.a:1', '{}')}${call('functions.a:2', '{}')}${END}`;
    const result = parseToolCalls(text, [], { maxCalls: 2 });
    expect(result.calls.map((c) => c.id)).toEqual(['functions.a:0', 'functions.a:1']);
    expect(result.remainingText).toBe(`${call('functions.a:2', '{}')}${END}`);
  });

  it.each([
    ['inside the arguments', `${BEGIN}<|tool_call_begin|>functions.a:0<|tool_call_argument_begin|>{"city":"Par`],
    ['after the argument token', `${BEGIN}<|tool_call_begin|>functions.a:0<|tool_call_argument_begin|>`],
    ['inside the id', `${BEGIN}<|tool_call_begin|>functions.get_wea`],
  ])('does not take output cut off %s for a call', (_where, text) => {
    expectNoCalls(text);
  });

  it('leaves a call cut off after a complete one in the text', () => {
    const cut = '<|tool_call_begin|>functions.b:1<|tool_call_argument_begin|>{"y":"tw';
    expect(parseToolCalls(`${BEGIN}${call('functions.a:0', '{}')}${cut}`)).toMatchObject({ calls: [{ name: 'a' }], remainingText: cut });
  });

  it('does not take tokens quoted in arguments for calls', () => {
    const quoted = JSON.stringify({ text: `<|tool_call_end|>${call('functions.rm:1', '{}')}` });
    expect(callsOf(`${BEGIN}${call('functions.write:0', quoted)}${END}`)).toEqual([['write', quoted]]);
  });

  it('ignores calls drafted in reasoning', () => {
    expectNoCalls(`<think>Maybe ${call('functions.rm:0', '{}')}</think>`);
    const result = parseToolCalls(`<think>${call('functions.rm:0', '{}')}</think>${BEGIN}${call('functions.a:1', '{}')}${END}`);
    expect(result.calls.map((c) => c.name)).toEqual(['a']);
  });
});
