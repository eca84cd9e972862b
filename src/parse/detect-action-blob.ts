import { callFromParts, type CandidateCall, type ClosedAtLimit } from './call-shapes';
import type { FoundCalls } from './found-calls';
import { isJsonObject, type JsonObject, type TolerantValue } from './json-value';
import { skipSpace } from './marker-finder';
import { callWithPositional } from './pythonic-calls';
import { parseTolerantValue, type WorkBudget } from './tolerant-json';
import type { PositionalParameterLookup } from './types';

/** The key that names the tool in a blob; a blob is read only where its `{` opens right before it. */
const ACTION_KEY = /"action"[ \t\r\n]*:/g;
/** The action LangChain's agents answer with instead of a tool. */
const FINAL_ANSWER = /^final[ _]?answer$/i;
/** What may stand before the blob on its span: an `Action:` line, then a fence's opening line. */
const HEADER = /\n[ \t]*(?:Action[ \t]*:[ \t]*\r?\n(?:[ \t]*\r?\n)*[ \t]*)?(?:```[\w.+-]*[ \t]*\r?\n[ \t]*)?$/;
/** How far back the header is looked for. */
const HEADER_REACH = 256;

/**
 * LangChain's JSON agents' call (the structured-chat agent's and the JSON-chat agent's, and the
 * agents that copied their prompts): a blob `{"action": "get_weather", "action_input": {...}}`,
 * usually in a fence, after an `Action:` line in the structured-chat agent. Only the first blob
 * counts, as LangChain reads it: what the model writes after (an `Observation:`) it made up. A
 * first blob whose action is `Final Answer` is the model's answer: no call, and none after it. An
 * input that is not an object (`"action_input": "Paris"`, a single-input tool's) is the call's one
 * positional argument, named by `positional` (see `callWithPositional`). The blob must hold those
 * two keys and nothing else, so JSON that merely has an `action` field is not a call. Its span
 * takes in the `Action:` line and the fence around it; the `Thought:` before stays, as the
 * model's text.
 */
export function* detectActionBlob(text: string, budget: WorkBudget, positional?: PositionalParameterLookup): Generator<FoundCalls> {
  if (!text.includes('"action_input"')) return;
  ACTION_KEY.lastIndex = 0;
  for (let key = ACTION_KEY.exec(text); key !== null && budget.remaining > 0; key = ACTION_KEY.exec(text)) {
    const open = openingBrace(text, key.index);
    if (open < 0) continue;
    const parsed = parseTolerantValue(text, open, text.length, { budget });
    if (!parsed.ok) {
      if (parsed.reason !== 'truncated') continue;
      const name = /^"action"[ \t\r\n]*:[ \t\r\n]*"([^"\n]{1,128})"/.exec(text.slice(key.index, key.index + 160))?.[1];
      const call = name === undefined || FINAL_ANSWER.test(name) ? undefined : callFromParts(name, new Map());
      if (call !== undefined) yield { start: spanStart(text, open), end: text.length, calls: [{ ...call, cutOff: true }], format: 'react_json' };
      return;
    }
    if (!isJsonObject(parsed.value) || !isBlob(parsed.value)) continue;
    const name = parsed.value.get('action') as string;
    if (FINAL_ANSWER.test(name.trim())) return;
    const call = blobCall(name.trim(), parsed.value.get('action_input'), positional, parsed);
    if (call === undefined) return;
    yield { start: spanStart(text, open), end: closingFence(text, parsed.end), calls: [call], format: 'react_json' };
    return;
  }
}

/** Whether an object is a blob: `action` a string, `action_input` present, no other key. */
function isBlob(object: JsonObject): boolean {
  return object.size === 2 && typeof object.get('action') === 'string' && object.has('action_input');
}

/** The call of `name` with the blob's `input`: an object its arguments, nothing (null, blank) none, else its one positional argument. */
function blobCall(name: string, input: TolerantValue | undefined, positional: PositionalParameterLookup | undefined, closed: ClosedAtLimit): CandidateCall | undefined {
  if (isJsonObject(input)) return callFromParts(name, input, undefined, closed);
  if (input === undefined || input === null || (typeof input === 'string' && input.trim().length === 0)) return callFromParts(name, new Map());
  return callWithPositional(name, new Map(), [input], positional);
}

/** The `{` just before the key at `at` (only whitespace between), or -1. */
function openingBrace(text: string, at: number): number {
  let pos = at - 1;
  while (pos >= 0 && (text.charCodeAt(pos) === 0x20 || text.charCodeAt(pos) === 0x09 || text.charCodeAt(pos) === 0x0a || text.charCodeAt(pos) === 0x0d)) pos--;
  return pos >= 0 && text.charCodeAt(pos) === 0x7b ? pos : -1;
}

/** Where the span of the blob opening at `open` begins: at its `Action:` line or fence, if any. */
function spanStart(text: string, open: number): number {
  const from = Math.max(0, open - HEADER_REACH);
  // The text's start is a line's start too: a newline stands in for it.
  const before = (from === 0 ? '\n' : '') + text.slice(from, open);
  const header = HEADER.exec(before);
  if (header === null || header[0].trim().length === 0) return open;
  return open - header[0].length + 1;
}

/** The end of the fence that closes right after the blob ending at `end`, or `end`. */
function closingFence(text: string, end: number): number {
  const after = skipSpace(text, end, text.length);
  return text.startsWith('```', after) ? after + 3 : end;
}
