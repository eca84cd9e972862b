import { parseToolCalls } from '../../src/parse';

/** The calls a user gets back from `text`, as name and arguments text. */
export function callsOf(text: string, offered?: string[]): [string, string][] {
  return parseToolCalls(text, offered).calls.map((call) => [call.name, call.arguments]);
}

/** Expects `text` to hold no call: format `none`, the whole text remaining. */
export function expectNoCalls(text: string, offered?: string[]): void {
  const result = parseToolCalls(text, offered);
  expect(result.calls).toEqual([]);
  expect(result.format).toBe('none');
  expect(result.remainingText).toBe(text.trim());
}
