import { callsFromValue } from './call-shapes';
import type { FoundCalls } from './found-calls';
import { skipSpace } from './marker-finder';
import { parseTolerantValue, type WorkBudget } from './tolerant-json';

/** Characters the scanner may read, per character of its region, before it gives up. */
const WORK_PER_CHAR = 4;
const WORK_BASE = 65_536;

/**
 * Finds calls written as JSON objects (or arrays of objects) anywhere in prose. At each `{`,
 * and each `[` followed by `{`, the tolerant parser reads a value: it balances braces and
 * brackets and respects strings, so a `}` inside a string does not end an object. A call found
 * is skipped past; so is any other complete value (JSON data is not searched for calls). After a
 * failed parse the scan resumes at the next character, so a call nested in a broken value is
 * still found; a work budget of a few passes over the region bounds those retries, keeping the
 * scan linear whatever the input.
 */
export function scanForCalls(text: string, start: number, limit: number, explicit: boolean): FoundCalls[] {
  const budget: WorkBudget = { remaining: WORK_PER_CHAR * (limit - start) + WORK_BASE };
  const found: FoundCalls[] = [];
  let pos = start;
  while (pos < limit && budget.remaining > 0) {
    const c = text.charCodeAt(pos);
    const opensObject = c === 0x7b;
    if (!opensObject && !(c === 0x5b && text.charCodeAt(skipSpace(text, pos + 1, limit)) === 0x7b)) {
      pos++;
      continue;
    }
    const parsed = parseTolerantValue(text, pos, limit, budget);
    if (parsed.ok) {
      const calls = callsFromValue(parsed.value, explicit);
      if (calls.length > 0) {
        found.push({ start: pos, end: parsed.end, calls, format: calls[0]?.shape ?? 'llama' });
        pos = parsed.end;
      } else {
        pos = opensObject ? parsed.end : pos + 1;
      }
    } else {
      // Past the depth limit, the openers passed over are pathological nesting: skip them.
      pos = parsed.reason === 'depth' ? Math.max(parsed.at, pos + 1) : pos + 1;
    }
  }
  return found;
}
