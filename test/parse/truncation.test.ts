import { callsOf, expectNoCalls } from './parse-helpers';

describe('a call cut off inside a number', () => {
  it.each([
    ['bare JSON', '{"name":"transfer","arguments":{"amount": 10'],
    ['bare JSON after a decimal point', '{"name":"transfer","arguments":{"amount": 1.'],
    ['a Hermes tag never closed', '<tool_call>{"name":"transfer","arguments":{"amount": 10'],
    ['Mistral name[ARGS]', '[TOOL_CALLS]transfer[ARGS]{"amount": 10'],
  ])('is not a call: %s', (_label, text) => {
    expectNoCalls(text);
  });

  it('is a call when a closing tag ends the text after the number', () => {
    expect(callsOf('<function=transfer>{"amount": 10</function>')).toEqual([['transfer', '{"amount":10}']]);
    expect(callsOf('<tool_call>{"name":"transfer","arguments":{"amount": 10}</tool_call>')).toEqual([
      ['transfer', '{"amount":10}'],
    ]);
  });

  it('keeps a number followed by the closers the model wrote', () => {
    expect(callsOf('{"name":"transfer","arguments":{"amount": 10}}')).toEqual([['transfer', '{"amount":10}']]);
  });
});
