import { mayStartCallJson } from './call-precheck';
import { callFromParts, callsFromValue, cutOffCall, type CandidateCall } from './call-shapes';
import { isWordChar } from './char-classes';
import type { FoundCalls } from './found-calls';
import { createMarkerFinder, skipSpace } from './marker-finder';
import { readTaggedRegion, type RegionCalls } from './tagged-region';
import { parseTolerantValue, type WorkBudget } from './tolerant-json';
import { parseValueSequence } from './value-sequence';

const MARKER = '[TOOL_CALLS]';
const CALL_ID = '[CALL_ID]';
const ARGS = '[ARGS]';
const MAX_NAME = 256;

/**
 * Mistral calls: `[TOOL_CALLS][{"name": ..., "arguments": ...}, ...]` (v3 tokenizers), and
 * `[TOOL_CALLS]name[ARGS]{...}` or `[TOOL_CALLS]name[CALL_ID]id[ARGS]{...}` (v11 and later),
 * one marker per call. When an array of calls was cut off or broken, the complete calls before
 * the break are kept.
 */
export function* detectMistral(text: string, budget: WorkBudget): Generator<FoundCalls> {
  const markers = createMarkerFinder(text, MARKER);
  for (let marker = markers.next(0); marker >= 0; ) {
    const from = marker + MARKER.length;
    const next = markers.next(from);
    const regionEnd = next < 0 ? text.length : next;
    if (!mayStartCall(text, skipSpace(text, from, text.length))) {
      marker = next;
      continue;
    }
    const region = { from, regionEnd, closeAt: -1, mayQuoteNext: next >= 0 };
    const read = readTaggedRegion(text, region, budget, (start, to, softLimit, readBudget) => {
      const pos = skipSpace(text, start, to);
      const c = pos < to ? text.charCodeAt(pos) : -1;
      const within = { limit: to, softLimit, regionEnd, budget: readBudget };
      return c === 0x5b || c === 0x7b ? readJson(text, pos, within) : readNamed(text, pos, within);
    });
    if (read === undefined) {
      marker = next;
      continue;
    }
    yield { start: marker, end: read.end, calls: read.calls, format: 'mistral' };
    marker = markers.next(read.end);
  }
}

/** How far one read of a marker's region may go. */
interface ReadBounds {
  readonly limit: number;
  readonly softLimit: number;
  /** The next marker, or the end of the text. */
  readonly regionEnd: number;
  readonly budget: WorkBudget;
}

/**
 * JSON calls. When an array of calls fails, its complete elements before the failure are kept,
 * by the read that will be the last: one bounded by the next marker, or one that shows such a
 * read would fail. Nothing inside the element that failed is a call: an object in a call's
 * arguments may well have a `name`.
 */
function readJson(text: string, from: number, bounds: ReadBounds): RegionCalls {
  const { limit, softLimit, regionEnd, budget } = bounds;
  const sequence = parseValueSequence(text, from, limit, false, budget, softLimit);
  const calls = sequence.items.flatMap((item) => callsFromValue(item.value, true, item));
  const { failure } = sequence;
  let end = sequence.end;
  if (failure !== undefined && failure.elementsEnd > failure.start && (limit <= regionEnd || sequence.cutBefore)) {
    // The elements alone: `[` and them, which the parser closes where they end.
    const elements = parseTolerantValue(text, failure.start, failure.elementsEnd, { budget });
    if (elements.ok) {
      calls.push(...callsFromValue(elements.value, true, elements));
      end = elements.end;
      // The element that failed, cut off by the end of the text: named in a warning (cutOffCall).
      const next = failure.reason === 'truncated' && limit === text.length ? text.indexOf('{', failure.elementsEnd) : -1;
      const cut = next >= 0 && next < limit ? cutOffCall(text, next) : undefined;
      if (cut !== undefined) calls.push({ ...cut, beyondSpan: true });
    }
  }
  return { calls, end, reached: sequence.reached, cutBefore: sequence.cutBefore };
}

function readNamed(text: string, from: number, bounds: ReadBounds): RegionCalls {
  const { limit, softLimit, budget } = bounds;
  const none = { calls: [], end: from, reached: from, cutBefore: false };
  const nameEnd = endOfWord(text, from, limit);
  // Some templates put a space before [CALL_ID] or [ARGS].
  let pos = skipSpace(text, nameEnd, limit);
  let id: string | undefined;
  if (text.startsWith(CALL_ID, pos)) {
    const idStart = pos + CALL_ID.length;
    const idEnd = endOfWord(text, idStart, limit);
    id = text.slice(idStart, idEnd);
    pos = skipSpace(text, idEnd, limit);
  }
  if (!text.startsWith(ARGS, pos)) return none;
  const parsed = parseTolerantValue(text, skipSpace(text, pos + ARGS.length, limit), limit, { budget, softLimit });
  if (!parsed.ok) return { ...none, reached: parsed.at, cutBefore: parsed.stringAcrossSoftLimit };
  const call = callFromParts(text.slice(from, nameEnd), parsed.value, id, parsed);
  const calls: CandidateCall[] = call === undefined ? [] : [call];
  return { calls, end: parsed.end, reached: parsed.end, cutBefore: false };
}

/** JSON that may hold a call, or a name: what may follow the marker in a real call. */
function mayStartCall(text: string, pos: number): boolean {
  const c = text.charCodeAt(pos);
  return mayStartCallJson(text, pos, text.length) || isWordChar(c) || c === 0x2e;
}

/** The end of a name or id at `from`: before `[` or whitespace, at most `MAX_NAME` long. */
function endOfWord(text: string, from: number, limit: number): number {
  const stop = from + MAX_NAME < limit ? from + MAX_NAME : limit;
  let pos = from;
  while (pos < stop) {
    const c = text.charCodeAt(pos);
    if (c === 0x5b || c <= 0x20) break;
    pos++;
  }
  return pos;
}
