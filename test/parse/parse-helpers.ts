import { parseToolCalls } from '../../src/parse';

/** The calls a user gets back from `text`, as name and arguments text. */
export function callsOf(text: string, offered?: string[]): [string, string][] {
  return parseToolCalls(text, offered).calls.map((call) => [call.name, call.arguments]);
}

/** The arguments of the one call found in `text`, as an object. */
export function argsOf(text: string): unknown {
  const calls = callsOf(text);
  expect(calls).toHaveLength(1);
  return JSON.parse(calls[0]![1]);
}

/** Expects `text` to hold no call: format `none`, the whole text remaining. */
export function expectNoCalls(text: string, offered?: string[]): void {
  const result = parseToolCalls(text, offered);
  expect(result.calls).toEqual([]);
  expect(result.format).toBe('none');
  expect(result.remainingText).toBe(text.trim());
}
