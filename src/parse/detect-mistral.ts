import { callFromParts, callsFromValue, type CandidateCall } from './call-shapes';
import type { FoundCalls } from './found-calls';
import { createMarkerFinder, skipSpace } from './marker-finder';
import { scanForCalls } from './object-scanner';
import { parseTolerantValue } from './tolerant-json';
import { parseValueSequence } from './value-sequence';

const MARKER = '[TOOL_CALLS]';
const CALL_ID = '[CALL_ID]';
const ARGS = '[ARGS]';
const MAX_NAME = 256;

/**
 * Mistral calls: `[TOOL_CALLS][{"name": ..., "arguments": ...}, ...]` (v3 tokenizers), and
 * `[TOOL_CALLS]name[ARGS]{...}` or `[TOOL_CALLS]name[CALL_ID]id[ARGS]{...}` (v11 and later),
 * one marker per call. When an array of calls was cut off, the complete calls in it are kept.
 */
export function detectMistral(text: string): FoundCalls[] {
  const markers = createMarkerFinder(text, MARKER);
  const found: FoundCalls[] = [];
  for (let marker = markers.next(0); marker >= 0; ) {
    const from = marker + MARKER.length;
    const next = markers.next(from);
    const limit = next < 0 ? text.length : next;
    const pos = skipSpace(text, from, limit);
    const c = text.charCodeAt(pos);
    const read = c === 0x5b || c === 0x7b ? readJson(text, pos, limit) : readNamed(text, pos, limit);
    if (read !== undefined) found.push({ start: marker, end: read.end, calls: read.calls, format: 'mistral' });
    marker = next;
  }
  return found;
}

interface Read {
  readonly calls: readonly CandidateCall[];
  readonly end: number;
}

function readJson(text: string, from: number, limit: number): Read | undefined {
  const sequence = parseValueSequence(text, from, limit, false);
  const calls = sequence.items.flatMap((item) => callsFromValue(item.value, true));
  let end = sequence.end;
  if (sequence.failure !== undefined) {
    for (const rescued of scanForCalls(text, sequence.failure.start + 1, limit, true)) {
      calls.push(...rescued.calls);
      end = rescued.end;
    }
  }
  return calls.length > 0 ? { calls, end } : undefined;
}

function readNamed(text: string, from: number, limit: number): Read | undefined {
  const nameEnd = endOfWord(text, from, Math.min(limit, from + MAX_NAME));
  let pos = nameEnd;
  let id: string | undefined;
  if (text.startsWith(CALL_ID, pos)) {
    const idStart = pos + CALL_ID.length;
    pos = endOfWord(text, idStart, Math.min(limit, idStart + MAX_NAME));
    id = text.slice(idStart, pos);
  }
  if (!text.startsWith(ARGS, pos)) return undefined;
  const parsed = parseTolerantValue(text, skipSpace(text, pos + ARGS.length, limit), limit);
  if (!parsed.ok) return undefined;
  const call = callFromParts(text.slice(from, nameEnd), parsed.value, id);
  return call === undefined ? undefined : { calls: [call], end: parsed.end };
}

function endOfWord(text: string, from: number, limit: number): number {
  let pos = from;
  while (pos < limit) {
    const c = text.charCodeAt(pos);
    if (c === 0x5b || c <= 0x20) break;
    pos++;
  }
  return pos;
}
