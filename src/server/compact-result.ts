import type { ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { cutUnits } from '../pipeline';

/**
 * Bounds on the parts of a result that cutting outputs leaves alone, applied only when they alone
 * would not fit in one response: warnings (lenient repair adds one per repaired element), error
 * texts (an in-process tool's thrown message, an unknown name quoted back) and the resolved name
 * (a made-up name is echoed as sent).
 */
const MAX_WARNINGS = 20;
const MAX_NAME_CHARS = 256;
/** The text bound of a turn's results: its share of the message, between these. */
const MAX_TEXT_CHARS = 2_000;
const MIN_TEXT_CHARS = 100;
/**
 * How far the bound goes below MIN_TEXT_CHARS when the results would not fit in the whole message
 * even so: 128 failed calls with long messages took ~570 bytes each at 100 characters, 73 KB of a
 * 64 KiB message, and the client got RESOURCE_EXHAUSTED instead of any result. A text cut to it
 * keeps its first words and the note of what was cut.
 */
const LAST_TEXT_CHARS = 25;

/**
 * How long each error text or warning of a turn of `results` results may stay so that they fit
 * in `maxBytes` (a result holds a few such texts, each up to 3 bytes a character).
 */
export function textBound(maxBytes: number, results: number): number {
  return Math.max(MIN_TEXT_CHARS, Math.min(MAX_TEXT_CHARS, Math.floor(maxBytes / (16 * Math.max(1, results)))));
}

/** `text` cut to about `max` UTF-16 units, never through a surrogate pair, marked when cut. */
function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  const kept = cutUnits(text, max);
  return `${kept}... [${text.length - kept.length} characters cut]`;
}

/** An error output (the error JSON) with each long string field cut; other text cut whole. */
function compactErrorOutput(output: string, max: number): string {
  if (output.length <= max) return output;
  try {
    const json = JSON.parse(output) as unknown;
    if (json && typeof json === 'object' && !Array.isArray(json)) {
      const fields = Object.entries(json as Record<string, unknown>).map(([key, value]) => [key, typeof value === 'string' ? cutText(value, max) : value]);
      return JSON.stringify(Object.fromEntries(fields));
    }
  } catch {
    // Not JSON: cut as text.
  }
  return cutText(output, max * 2);
}

/** Bounds a result's warnings, error texts (to `max` characters) and resolved name in place. */
function compactResult(result: ToolResult, max: number): void {
  let warnings = result.warnings.map((warning) => cutText(warning, max));
  if (warnings.length > MAX_WARNINGS) {
    warnings = [...warnings.slice(0, MAX_WARNINGS), `... and ${warnings.length - MAX_WARNINGS} more warnings, left out so that the turn's results fit in one response (max_response_bytes)`];
  }
  result.warnings = warnings;
  result.resolvedToolName = cutText(result.resolvedToolName, MAX_NAME_CHARS);
  if (result.isError) result.output = compactErrorOutput(result.output, max);
  if (result.error) {
    result.error.message = cutText(result.error.message, max);
    result.error.suggestion = cutText(result.error.suggestion, max);
  }
}

/** The texts compactResult bounds, as they were before it. */
type Texts = Pick<ToolResult, 'warnings' | 'resolvedToolName' | 'output'> & { message?: string; suggestion?: string };

const textsOf = (result: ToolResult): Texts => ({ warnings: result.warnings, resolvedToolName: result.resolvedToolName, output: result.output, message: result.error?.message, suggestion: result.error?.suggestion });

function restore(result: ToolResult, texts: Texts): void {
  result.warnings = texts.warnings;
  result.resolvedToolName = texts.resolvedToolName;
  result.output = texts.output;
  if (result.error) {
    result.error.message = texts.message!;
    result.error.suggestion = texts.suggestion!;
  }
}

/**
 * Bounds the warnings, error texts and names of a turn's `results` in place until `bytes()` (what
 * they take with what else is not cut) is at most `room`, or each text is at its floor of
 * MIN_TEXT_CHARS, below which it goes (to LAST_TEXT_CHARS) only while they would take more than
 * `maxBytes`. The turn's share (textBound) counts about a byte a character: 20 warnings of
 * 2,000 CJK characters are 120 KB a result, and 40 such results took 4.8 MB of a 4 MiB message
 * (grpc-js refused to send it, after every call ran). The share is then halved, each time cut from
 * the texts as they came, so a text is cut once and says how much of it was cut.
 */
export function compactResults(results: ToolResult[], maxBytes: number, room: number, bytes: () => number): void {
  const texts = results.map(textsOf);
  const next = (max: number) => Math.max(max > MIN_TEXT_CHARS ? MIN_TEXT_CHARS : LAST_TEXT_CHARS, Math.floor(max / 2));
  for (let max = textBound(maxBytes, results.length); ; max = next(max)) {
    results.forEach((result, i) => {
      restore(result, texts[i]!);
      compactResult(result, max);
    });
    const used = bytes();
    if (used <= room || max <= LAST_TEXT_CHARS || (max <= MIN_TEXT_CHARS && used <= maxBytes)) return;
  }
}
