import * as charClasses from './char-classes';
import type { TolerantValue } from './json-value';
import * as markerFinder from './marker-finder';
import * as tolerantJson from './tolerant-json';
import type { ClosedContainer, ScalarAtTextEnd } from './parse-outcome';
import type { FailedValue, WorkBudget } from './tolerant-json';

// Bound once: under some CommonJS transforms (the test runner's) every call through an import
// binding goes through a getter, and these run once per character or candidate.
const { isWordChar } = charClasses;
const { skipSpace } = markerFinder;
const { parseTolerantValue } = tolerantJson;

/** A JSON object or array found at `text[start, end)`. */
export interface SequenceItem {
  readonly value: TolerantValue;
  readonly start: number;
  readonly end: number;
  /** See `ParsedValue.containersClosedAtLimit`. */
  readonly containersClosedAtLimit: readonly ClosedContainer[];
  /** See `ParsedValue.limitEndsText`. */
  readonly limitEndsText: boolean;
  /** See `ParsedValue.scalarAtTextEnd`. */
  readonly scalarAtTextEnd?: ScalarAtTextEnd;
}

/** The containers read one after another from a region, and how the reading stopped. */
export interface ValueSequence {
  readonly items: readonly SequenceItem[];
  /** Just after the last item, or where reading began when there was none. */
  readonly end: number;
  /** The furthest character read: where reading stopped, or where a failed container did. */
  readonly reached: number;
  /** Set when a container began but did not parse; `start` is where it began. */
  readonly failure?: FailedValue & { readonly start: number };
  /**
   * Whether reading with `limit` at `softLimit` would surely have found the same items and then
   * failed: the failed container has a string running across `softLimit`.
   */
  readonly cutBefore: boolean;
}

/**
 * Reads JSON objects and arrays one after another from `text[start, limit)`, separated by
 * whitespace, commas or semicolons; with `skipFences`, Markdown fences (```json) between them
 * are skipped too. Stops at the first other character or the first container that fails.
 * `softLimit` is passed to the parser (see `ValueSequence.cutBefore`).
 */
export function parseValueSequence(
  text: string,
  start: number,
  limit: number,
  skipFences: boolean,
  budget: WorkBudget,
  softLimit = -1,
): ValueSequence {
  const items: SequenceItem[] = [];
  let end = start;
  let pos = start;
  for (;;) {
    pos = skipFillers(text, pos, limit, skipFences);
    if (pos >= limit) break;
    const c = text.charCodeAt(pos);
    if (c !== 0x7b && c !== 0x5b) break;
    const parsed = parseTolerantValue(text, pos, limit, { budget, softLimit });
    if (!parsed.ok) {
      const { reason, at, stringAcrossSoftLimit, elementsEnd, callKeys, unclosed } = parsed;
      const failure = { ok: false, reason, at, stringAcrossSoftLimit, elementsEnd, callKeys, unclosed, start: pos } as const;
      return { items, end, reached: at, failure, cutBefore: stringAcrossSoftLimit };
    }
    items.push(parsed);
    end = pos = parsed.end;
  }
  return { items, end, reached: pos, cutBefore: false };
}

/** Skips whitespace, `,` and `;`, and with `skipFences` fences with their language tags. */
export function skipFillers(text: string, from: number, limit: number, skipFences: boolean): number {
  let pos = from;
  for (;;) {
    pos = skipSpace(text, pos, limit);
    if (pos >= limit) return pos;
    const c = text.charCodeAt(pos);
    if (c === 0x2c || c === 0x3b) {
      pos++;
    } else if (skipFences && text.startsWith('```', pos)) {
      pos += 3;
      while (pos < limit && (isWordChar(text.charCodeAt(pos)) || text.charCodeAt(pos) === 0x2e)) pos++;
    } else {
      return pos;
    }
  }
}
