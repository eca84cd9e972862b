import type { ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { headAndWhole } from '../pipeline/bound-error';

/**
 * A failed call's result cut to its least, fit-response's last resort for errors (least-result.ts):
 * compact-result.ts stops at 25 UTF-16 units a text, each error text four times in a result (its
 * message and suggestion, in the error JSON and in ToolError), up to 3 bytes a unit, 6 in the JSON
 * (`\u0001`): 128 failures with long CJK messages took ~530 bytes each, 68 KB of a 64 KiB message,
 * and the client got RESOURCE_EXHAUSTED instead of any result, every call run. At its least each
 * text keeps a head within a number of bytes (as the JSON escapes it) and a marker counting what it
 * left out, as bound-error.ts marks a cut; the output stays the error JSON, valid, with every field.
 */

/** Bytes (of UTF-8, as JSON escapes it) of its message's head an error at its least keeps. */
export const LEAST_MESSAGE_BYTES = 24;
/** Bytes of its suggestion's head an error at its least keeps: none, the marker alone (its kind and `recoverable` say whether to try again). */
export const LEAST_SUGGESTION_BYTES = 0;
/** Bytes of the tool name in its error JSON's `tool` an error at its least keeps. */
export const LEAST_TOOL_BYTES = 64;

/** The error texts of a result as they were before fit-response cut any (compact-result.ts). */
export interface ErrorTexts {
  readonly output: string;
  readonly message: string;
  readonly suggestion: string;
}

/** The one warning of an error cut to its least (its other warnings, if any, left out). */
export const leastErrorWarning = (others: boolean): string =>
  `error texts cut to fit max_response_bytes${others ? ' (other warnings dropped)' : ''}`;

/** Bytes a code point takes in a JSON string: its escape's, or its UTF-8's. */
function jsonBytes(point: string): number {
  const code = point.codePointAt(0)!;
  if (point === '"' || point === '\\') return 2;
  if (code < 0x20) return '\b\f\n\r\t'.includes(point) ? 2 : 6;
  if (code >= 0xd800 && code <= 0xdfff) return 6;
  return code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
}

/**
 * `text` cut to its longest head of at most `maxBytes` bytes in a JSON string, and a marker
 * counting the code points left out of its whole text (the marker alone when no head is kept); the
 * text as it was when the cut would not be shorter.
 */
export function leastText(text: string, maxBytes: number): string {
  const { head, whole } = headAndWhole(text);
  let bytes = 0;
  let units = 0;
  let points = 0;
  for (const point of head) {
    const size = jsonBytes(point);
    if (bytes + size > maxBytes) break;
    bytes += size;
    units += point.length;
    points++;
  }
  if (points === whole) return text;
  const omitted = whole - points;
  const cut = units === 0 ? `[${omitted} characters omitted]` : `${head.slice(0, units)} ... [${omitted} characters omitted]`;
  return Buffer.byteLength(JSON.stringify(cut)) < Buffer.byteLength(JSON.stringify(text)) ? cut : text;
}

/** The error JSON of `output` with its free texts at their least; a text that is not a JSON object is cut as one. */
function leastOutput(output: string): string {
  try {
    const json = JSON.parse(output) as unknown;
    if (json && typeof json === 'object' && !Array.isArray(json)) {
      const cut = { ...(json as Record<string, unknown>) };
      if (typeof cut.tool === 'string') cut.tool = leastText(cut.tool, LEAST_TOOL_BYTES);
      if (typeof cut.message === 'string') cut.message = leastText(cut.message, LEAST_MESSAGE_BYTES);
      if (typeof cut.suggestion === 'string') cut.suggestion = leastText(cut.suggestion, LEAST_SUGGESTION_BYTES);
      return JSON.stringify(cut);
    }
  } catch {
    // Not JSON: cut as text.
  }
  return leastText(output, LEAST_MESSAGE_BYTES + LEAST_SUGGESTION_BYTES);
}

/**
 * `result` (a failure) with its error texts at their least, cut from `texts` (as they were before
 * any cut), one warning saying so and `name` as its resolved name; a copy, `result` unchanged.
 */
export function leastError(result: ToolResult, texts: ErrorTexts, name: string): ToolResult {
  const error = result.error && { ...result.error, message: leastText(texts.message, LEAST_MESSAGE_BYTES), suggestion: leastText(texts.suggestion, LEAST_SUGGESTION_BYTES) };
  return { ...result, output: leastOutput(texts.output), error, resolvedToolName: name, warnings: [leastErrorWarning(result.warnings.length > 0)] };
}

/** The error texts of `result` as they are now. */
export const errorTextsOf = (result: ToolResult): ErrorTexts => ({ output: result.output, message: result.error?.message ?? '', suggestion: result.error?.suggestion ?? '' });
