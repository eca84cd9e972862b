import { parseToolCalls } from '../../src/parse';
import { callsOf, expectNoCalls } from './parse-helpers';

/** A gpt-oss call as its chat format writes it. */
const call = (name: string, args: string, recipient = `functions.${name}`): string =>
  `<|start|>assistant<|channel|>commentary to=${recipient} <|constrain|>json<|message|>${args}<|call|>`;

const WEATHER = call('get_weather', '{"location":"SF"}');
const ANALYSIS = '<|channel|>analysis<|message|>The user wants the weather. I will call get_weather.<|end|>';

describe('gpt-oss harmony calls', () => {
  it('reads the call, its format and the text around it', () => {
    expect(parseToolCalls(WEATHER)).toEqual({
      calls: [{ id: expect.stringMatching(/^call_[A-Za-z0-9]{24}$/), name: 'get_weather', arguments: '{"location":"SF"}' }],
      remainingText: '',
      format: 'harmony',
    });
    const result = parseToolCalls(`${ANALYSIS}<|start|>assistant<|channel|>commentary<|message|>Checking.<|end|>${WEATHER}`);
    expect(result.calls.map((c) => c.name)).toEqual(['get_weather']);
    expect(result.remainingText).toBe(`${ANALYSIS}<|start|>assistant<|channel|>commentary<|message|>Checking.<|end|>`);
  });

  it.each([
    ['the recipient before the channel', '<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{"location":"SF"}<|call|>'],
    ['no <|constrain|>', '<|start|>assistant<|channel|>commentary to=functions.get_weather json<|message|>{"location":"SF"}<|call|>'],
    ['no content type', '<|start|>assistant<|channel|>commentary to=functions.get_weather<|message|>{"location":"SF"}<|call|>'],
    ['<|constrain|> with no space', '<|start|>assistant<|channel|>commentary to=functions.get_weather<|constrain|>json<|message|>{"location":"SF"}<|call|>'],
    ['the text starting at <|channel|> (vLLM)', '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"location":"SF"}<|call|>'],
    ['no <|call|> (a server stopped on it)', '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"location":"SF"}'],
    ['a call on the analysis channel (vLLM takes it)', '<|channel|>analysis to=functions.get_weather<|message|>{"location":"SF"}<|call|>'],
    ['spaces around the JSON', '<|channel|>commentary to=functions.get_weather<|message|>\n {"location":"SF"} \n<|call|>'],
  ])('reads %s', (_label, text) => {
    expect(parseToolCalls(text)).toMatchObject({ calls: [{ name: 'get_weather', arguments: '{"location":"SF"}' }], remainingText: '', format: 'harmony' });
  });

  it('returns several calls in order, and a call with no arguments', () => {
    const text = `${call('a', '{"x":1}')}\n${call('b', '{}')}`;
    expect(callsOf(text)).toEqual([['a', '{"x":1}'], ['b', '{}']]);
  });

  it('does not take a message with no recipient, or from another role, for a call', () => {
    expectNoCalls('<|start|>assistant<|channel|>final<|message|>{"location":"SF"}<|return|>');
    expectNoCalls('<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>{"temp":20}<|end|>', ['get_weather']);
    expectNoCalls('<|start|>user<|message|>to=functions.get_weather {"location":"SF"}<|end|>');
  });

  it('takes a call to a built-in tool only when that tool is offered by name', () => {
    const browse = call('x', '{"query":"weather SF"}', 'browser.search');
    expectNoCalls(browse);
    expectNoCalls(browse, ['search']);
    expect(callsOf(browse, ['browser.search'])).toEqual([['browser.search', '{"query":"weather SF"}']]);
    const result = parseToolCalls(`${browse}\n${WEATHER}`);
    expect(result.calls.map((c) => c.name)).toEqual(['get_weather']);
    expect(result.remainingText).toBe(browse);
  });

  it('does not take a body that is not a JSON object for a call', () => {
    expectNoCalls('<|start|>assistant<|channel|>analysis to=python code<|message|>print(1)<|call|>', ['python']);
    expectNoCalls(call('get_weather', '"SF"'));
  });

  it('returns only offered tools, and leaves the others in the text', () => {
    const text = `${call('a', '{"x":1}')}\n${call('b', '{"y":2}')}`;
    expect(parseToolCalls(text, ['b'])).toMatchObject({ calls: [{ name: 'b', arguments: '{"y":2}' }], remainingText: call('a', '{"x":1}') });
    expectNoCalls(text, ['c']);
  });

  it('returns at most maxCalls calls and leaves the rest in the text', () => {
    const result = parseToolCalls(`${WEATHER}${WEATHER}${WEATHER}`, [], { maxCalls: 2 });
    expect(result.calls).toHaveLength(2);
    expect(result.remainingText).toBe(WEATHER);
  });

  it.each([
    ['inside the JSON', '<|channel|>commentary to=functions.get_weather<|message|>{"location":"S'],
    ['after an open object', '<|channel|>commentary to=functions.get_weather<|message|>{"location":"SF",'],
    ['at the end of the message tag', '<|channel|>commentary to=functions.get_weather<|message|>'],
    ['inside the header', '<|start|>assistant<|channel|>commentary to=functions.get_wea'],
  ])('does not take output cut off %s for a call', (_where, text) => {
    expectNoCalls(text);
  });

  it('leaves a call cut off after a complete one in the text', () => {
    const cut = '<|start|>assistant<|channel|>commentary to=functions.b<|message|>{"y":"tw';
    expect(parseToolCalls(`${WEATHER}${cut}`)).toMatchObject({ calls: [{ name: 'get_weather' }], remainingText: cut });
  });

  it('supplies a brace dropped before <|call|>, and does not take tokens quoted in the arguments for calls', () => {
    expect(callsOf('<|channel|>commentary to=functions.a<|message|>{"x":{"y":1}<|call|>')).toEqual([['a', '{"x":{"y":1}}']]);
    const quoted = JSON.stringify({ text: `${call('rm', '{}')}<|channel|>commentary to=functions.rm<|message|>{}` });
    expect(callsOf(call('write', quoted))).toEqual([['write', quoted]]);
  });

  it('ignores calls drafted in the analysis channel', () => {
    expectNoCalls('<|channel|>analysis<|message|>Maybe <tool_call>{"name":"rm","arguments":{}}</tool_call><|end|>');
    const drafted = '<|start|>assistant<|channel|>analysis<|message|>Or {"name":"rm","arguments":{"path":"/"}}<|end|>';
    expect(parseToolCalls(`${drafted}${WEATHER}`)).toMatchObject({ calls: [{ name: 'get_weather' }], remainingText: drafted });
  });
});
