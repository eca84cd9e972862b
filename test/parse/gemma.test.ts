import { parseToolCalls } from '../../src/parse';
import { callsOf, expectNoCalls } from './parse-helpers';

// Gemma 4 and FunctionGemma write calls in a format of their own (bare keys, strings between
// quote tokens); before, ParseToolCalls found no call in them (format none).

const Q = '<|"|>';
const gemma4 = (body: string): string => `<|tool_call>${body}<tool_call|>`;

describe('Gemma 4 and FunctionGemma calls', () => {
  it('reads a Gemma 4 call, its format and the text around it', () => {
    expect(parseToolCalls(`Let me check.\n${gemma4(`call:get_weather{city:${Q}Paris${Q},days:3}`)}`)).toEqual({
      calls: [{ id: expect.stringMatching(/^call_[A-Za-z0-9]{24}$/), name: 'get_weather', arguments: '{"city":"Paris","days":3}' }],
      remainingText: 'Let me check.',
      format: 'gemma',
    });
  });

  it('reads a FunctionGemma call', () => {
    expect(callsOf('<start_function_call>call:get_weather{city:<escape>Paris<escape>,unit:<escape>celsius<escape>}<end_function_call>')).toEqual([
      ['get_weather', '{"city":"Paris","unit":"celsius"}'],
    ]);
  });

  it('reads several calls in order, and a call with no arguments', () => {
    expect(callsOf(`${gemma4('call:a{x:1}')}${gemma4('call:b{}')}\n${gemma4('call:web.search{q:1}')}`)).toEqual([
      ['a', '{"x":1}'],
      ['b', '{}'],
      ['web.search', '{"q":1}'],
    ]);
  });

  it('keeps a string exactly as written, and reads nested objects, lists and bare values', () => {
    const body = `call:f{s:${Q}a, {b}: "c" ]${Q},nested:{inner:${Q}v${Q},n:-2.50},items:[${Q}a${Q},3,true,null,[1]],off:false,z:None,word:hello world,big:12345678901234567890,${Q}odd key${Q}:1,}`;
    expect(callsOf(gemma4(body))).toEqual([['f', '{"s":"a, {b}: \\"c\\" ]","nested":{"inner":"v","n":-2.50},"items":["a",3,true,null,[1]],"off":false,"z":null,"word":"hello world","big":12345678901234567890,"odd key":1}']]);
  });

  it('reads a call whose closing token is missing, but not one cut off or malformed', () => {
    expect(callsOf('<|tool_call>call:f{a:1}')).toEqual([['f', '{"a":1}']]);
    for (const text of [
      `<|tool_call>call:f{a:${Q}open`,
      '<|tool_call>call:f{a:1',
      '<|tool_call>call:f{a:[1,2}<tool_call|>',
      '<|tool_call>call:f{a:1<tool_call|>',
      '<|tool_call>call:f{a}<tool_call|>',
      '<|tool_call>call:f{a:}<tool_call|>',
      '<|tool_call>f{a:1}<tool_call|>',
      '<|tool_call>call:{a:1}<tool_call|>',
    ]) {
      expectNoCalls(text);
    }
  });

  it('ignores a call drafted in reasoning, and a reasoning tag quoted in a string', () => {
    const draft = `<think>${gemma4('call:rm{}')}</think>`;
    expect(parseToolCalls(`${draft}${gemma4('call:ok{}')}`)).toMatchObject({ calls: [{ name: 'ok' }], remainingText: draft });
    expect(callsOf(`${gemma4(`call:write{content:${Q}a <think> b${Q}}`)} after`)).toEqual([['write', '{"content":"a <think> b"}']]);
  });

  it("ignores a call drafted in Gemma 4's thinking channel, which ends at its first <channel|>", () => {
    const thought = `<|channel>thought\nMaybe ${gemma4('call:rm{}')}? No, and not {"name": "rm", "arguments": {}} either.<channel|>`;
    expect(parseToolCalls(`${thought}Checking. ${gemma4('call:ok{}')}`)).toMatchObject({ calls: [{ name: 'ok' }], remainingText: `${thought}Checking.` });
    // Left open, the channel runs to the end: what it drafted is not run.
    expectNoCalls(`<|channel>thought\nI will call ${gemma4('call:rm{}')}`);
    // Only the token as written opens it: another case is text.
    expect(callsOf('<|CHANNEL>x<channel|>{"name": "ok", "arguments": {}}')).toEqual([['ok', '{}']]);
  });

  it('returns only offered tools, and a call quoted in a string is no call of its own', () => {
    const quoted = `${gemma4(`call:note{text:${Q}${gemma4('call:rm{}')}${Q}}`)}`;
    expect(callsOf(quoted)).toEqual([['note', JSON.stringify({ text: '<|tool_call>call:rm{}<tool_call|>' })]]);
    expect(callsOf(`${gemma4('call:rm{}')}${gemma4('call:ok{}')}`, ['ok'])).toEqual([['ok', '{}']]);
  });
});
