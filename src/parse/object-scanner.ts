import * as callPrecheck from './call-precheck';
import * as callShapes from './call-shapes';
import type { FoundCalls } from './found-calls';
import * as tolerantJson from './tolerant-json';
import type { WorkBudget } from './tolerant-json';

// Bound once: under some CommonJS transforms (the test runner's) every call through an import
// binding goes through a getter, and these run once per character or candidate.
const { mayStartCallJson } = callPrecheck;
const { callsFromValue, cutOffCall } = callShapes;
const { parseTolerantValue } = tolerantJson;

/**
 * Finds calls written as JSON objects (or arrays of objects) anywhere in prose. At each `{` or
 * `[` that passes `mayStartCallJson`, the tolerant parser reads a value: it balances braces and
 * brackets and respects strings, so a `}` inside a string does not end an object. A call found
 * is skipped past; so is any other complete value (JSON data is not searched for calls). A broken
 * call (an object with a call's keys that failed) is skipped to where its brackets balance, or to
 * the limit: an object in its arguments is never a call. After any other failed parse the scan
 * resumes at the next character, so a call nested in a broken wrapper is still found, passing
 * over the containers the parse left open (they would fail again where it did, each re-reading
 * the data up to there).
 *
 * Work: the values that parse never overlap (the scan goes on after each), so together they read
 * the text at most once, and are not charged to `budget`; failed parses are, and the scan stops
 * when it is spent. Broken data of any size thus costs about its length once, leaving the budget
 * for the calls after it, while input made to fail again and again is cut off: the scan stays
 * linear whatever the input.
 */
export function* scanForCalls(
  text: string,
  start: number,
  limit: number,
  explicit: boolean,
  budget: WorkBudget,
): Generator<FoundCalls> {
  // The openers failed parses left open, by offset from `start`; allocated at the first one.
  let unclosed: Uint8Array | undefined;
  let pos = nextCandidate(text, start, limit, start, unclosed);
  while (pos < limit && budget.remaining > 0) {
    const charged = budget.remaining;
    const parsed = parseTolerantValue(text, pos, limit, { budget });
    if (parsed.ok) {
      budget.remaining = charged;
      const calls = callsFromValue(parsed.value, explicit, parsed);
      if (calls.length > 0) yield { start: pos, end: parsed.end, calls, format: calls[0]?.shape ?? 'llama' };
      pos = parsed.end;
    } else if (parsed.callKeys) {
      // Cut off by the end of the text: said in a warning, its text left (see cutOffCall).
      const cut = parsed.reason === 'truncated' && limit === text.length ? cutOffCall(text, pos) : undefined;
      if (cut !== undefined) yield { start: pos, end: limit, calls: [cut], format: 'llama' };
      pos = balancedEnd(text, pos, limit);
    } else {
      if (parsed.unclosed.length > 0) {
        const marks = (unclosed ??= new Uint8Array(limit - start));
        for (const open of parsed.unclosed) marks[open - start] = 1;
      }
      // Past the depth limit, the openers passed over are pathological nesting: skip them.
      pos = parsed.reason === 'depth' && parsed.at > pos ? parsed.at : pos + 1;
    }
    pos = nextCandidate(text, pos, limit, start, unclosed);
  }
}

/**
 * The next `{` or `[` at or after `from` that may start a call and is not marked in `unclosed`
 * (offsets from `start`), or `limit`.
 */
function nextCandidate(text: string, from: number, limit: number, start: number, unclosed?: Uint8Array): number {
  for (let pos = from; pos < limit; pos++) {
    const c = text.charCodeAt(pos);
    if ((c === 0x7b || c === 0x5b) && unclosed?.[pos - start] !== 1 && mayStartCallJson(text, pos, limit)) return pos;
  }
  return limit;
}

/**
 * Just after the bracket that closes the one at `from`, counting `{}[]` outside strings (double-
 * or single-quoted, with escapes), or `limit` when none does.
 */
function balancedEnd(text: string, from: number, limit: number): number {
  let depth = 0;
  let quote = 0;
  for (let pos = from; pos < limit; pos++) {
    const c = text.charCodeAt(pos);
    if (quote !== 0) {
      if (c === 0x5c) pos++;
      else if (c === quote) quote = 0;
    } else if (c === 0x22 || c === 0x27) {
      quote = c;
    } else if (c === 0x7b || c === 0x5b) {
      depth++;
    } else if ((c === 0x7d || c === 0x5d) && --depth === 0) {
      return pos + 1;
    }
  }
  return limit;
}
