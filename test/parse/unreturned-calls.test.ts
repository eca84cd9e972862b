import { parseToolCalls } from '../../src/parse';

// Calls that are not returned stay in the remaining text (found in review): a span of which only
// some calls were returned was cut out whole, so calls naming tools not offered, or past
// maxCalls, vanished from both the calls and the remaining text.

function parsed(text: string, offered?: string[], maxCalls?: number): [string, string[], string] {
  const result = parseToolCalls(text, offered, { maxCalls });
  return [result.format, result.calls.map((call) => call.name), result.remainingText];
}

describe('a span holding calls that are not returned keeps its text', () => {
  it.each([
    ['a <tool_call> tag', '<tool_call>{"name":"a","arguments":{}}\n{"name":"drop_db","arguments":{}}</tool_call>', 'hermes'],
    ['a [TOOL_CALLS] array', '[TOOL_CALLS][{"name":"a","arguments":{}},{"name":"drop_db","arguments":{}}]', 'mistral'],
    ['an OpenAI tool_calls object', '{"tool_calls":[{"function":{"name":"drop_db","arguments":"{}"}},{"function":{"name":"a","arguments":"{}"}}]}', 'openai'],
  ])('a call to a tool not offered in %s', (_label, text, format) => {
    expect(parsed(`Done. ${text}`, ['a'])).toEqual([format, ['a'], `Done. ${text}`]);
  });

  it('calls past maxCalls in an array', () => {
    const text = '[TOOL_CALLS][{"name":"a","arguments":{}},{"name":"b","arguments":{}},{"name":"c","arguments":{}}]';
    expect(parsed(`${text} ok`, [], 2)).toEqual(['mistral', ['a', 'b'], `${text} ok`]);
  });

  it('while spans whose calls are all returned are still cut out', () => {
    const partial = '<tool_call>{"name":"a","arguments":{}}\n{"name":"x","arguments":{}}</tool_call>';
    const whole = '<tool_call>{"name":"b","arguments":{}}</tool_call>';
    expect(parsed(`${whole}\n${partial}\n${whole}`, ['a', 'b'])).toEqual(['hermes', ['b', 'a', 'b'], partial]);
  });
});
