import type { TolerantValue } from './json-value';
import { skipSpace } from './marker-finder';
import { parseTolerantValue, type FailedValue } from './tolerant-json';

/** A JSON object or array found at `text[start, end)`. */
export interface SequenceItem {
  readonly value: TolerantValue;
  readonly start: number;
  readonly end: number;
}

/** The containers read one after another from a region, and how the reading stopped. */
export interface ValueSequence {
  readonly items: readonly SequenceItem[];
  /** Just after the last item, or where reading began when there was none. */
  readonly end: number;
  /** Set when a container began but did not parse; `start` is where it began. */
  readonly failure?: FailedValue & { readonly start: number };
}

/**
 * Reads JSON objects and arrays one after another from `text[start, limit)`, separated by
 * whitespace, commas or semicolons; with `skipFences`, Markdown fence lines (```json) between
 * them are skipped too. Stops at the first other character or the first container that fails.
 */
export function parseValueSequence(text: string, start: number, limit: number, skipFences: boolean): ValueSequence {
  const items: SequenceItem[] = [];
  let end = start;
  let pos = start;
  for (;;) {
    pos = skipFillers(text, pos, limit, skipFences);
    if (pos >= limit) break;
    const c = text.charCodeAt(pos);
    if (c !== 0x7b && c !== 0x5b) break;
    const parsed = parseTolerantValue(text, pos, limit);
    if (!parsed.ok) return { items, end, failure: { ...parsed, start: pos } };
    items.push(parsed);
    end = pos = parsed.end;
  }
  return { items, end };
}

/** Skips whitespace, `,` and `;`, and with `skipFences` whole lines that start with ```. */
export function skipFillers(text: string, from: number, limit: number, skipFences: boolean): number {
  let pos = from;
  for (;;) {
    pos = skipSpace(text, pos, limit);
    if (pos >= limit) return pos;
    const c = text.charCodeAt(pos);
    if (c === 0x2c || c === 0x3b) {
      pos++;
    } else if (skipFences && text.startsWith('```', pos)) {
      while (pos < limit && text.charCodeAt(pos) !== 0x0a) pos++;
    } else {
      return pos;
    }
  }
}
