import { parseToolCalls } from '../../src/parse';
import { expectNoCalls } from './parse-helpers';

/**
 * gpt-oss may write the recipient in the role part of the header (`<|start|>assistant
 * to=functions.NAME<|channel|>...`). The prompt ends with `<|start|>assistant`, so a completion
 * (what vLLM and most servers hand on) whose first message is such a call starts with ` to=`.
 */
describe('a harmony call with the recipient before the channel, at the start of a completion', () => {
  it.each([
    ['a space first', ' to=functions.get_weather<|channel|>commentary json<|message|>{"location":"SF"}<|call|>'],
    ['no space', 'to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>{"location":"SF"}<|call|>'],
  ])('is read, with %s', (_label, text) => {
    expect(parseToolCalls(`${text}\n`)).toMatchObject({
      calls: [{ name: 'get_weather', arguments: '{"location":"SF"}' }],
      remainingText: '',
      format: 'harmony',
    });
  });

  it('is read before a second call', () => {
    const second = '<|start|>assistant to=functions.b<|channel|>commentary json<|message|>{}<|call|>';
    const result = parseToolCalls(` to=functions.a<|channel|>commentary json<|message|>{"x":1}<|call|>${second}`);
    expect(result.calls.map((c) => [c.name, c.arguments])).toEqual([['a', '{"x":1}'], ['b', '{}']]);
    expect(result.remainingText).toBe('');
  });

  it('is not read after prose', () => {
    expectNoCalls('Send it to=functions.get_weather<|channel|>commentary json<|message|>{"location":"SF"}<|call|>');
  });
});

describe('reasoning before a completion-start recipient', () => {
  it('stays in the remaining text', () => {
    const analysis = '<|channel|>analysis<|message|>Need the weather.<|end|>';
    const result = parseToolCalls(`${analysis} to=functions.get_weather<|channel|>commentary json<|message|>{"location":"SF"}<|call|>`);
    expect(result.calls.map((c) => c.name)).toEqual(['get_weather']);
    expect(result.remainingText).toBe(analysis);
  });
});
