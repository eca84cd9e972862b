import { isJsonObject, toCompactJson } from '../parse/json-value';
import { skipSpace } from '../parse/marker-finder';
import { parseTolerantValue } from '../parse/tolerant-json';

/** Arguments text a lenient tool's call sent that JSON.parse refused, as JSON, and what was read past JSON. */
export interface TolerantArguments {
  /** The arguments as strict JSON text. */
  readonly json: string;
  /** The warning the call's result carries: that its arguments' syntax was repaired, and how. */
  readonly warning: string;
}

const FENCE = '```';

/**
 * Arguments text JSON.parse refused, read as models write it when they mean JSON (a Python
 * agent framework's dict, a chat model's habits): trailing commas, single-quoted strings, unquoted
 * keys, Python's `True`, `False` and `None`, raw line breaks in strings, `+1` and `.5`, the whole
 * in a Markdown code fence (```` ```json ... ``` ````); by ParseToolCalls's parser, which reads
 * the same text in a model's output (linear, no backtracking). Undefined unless it is one JSON
 * object with nothing after it: nor text cut off (an object left open where the text ends, or
 * ending inside a string or a number: what came next is not known, and guessing it would invent
 * arguments), which stays refused, as it is for every tool, so the model sends it again whole.
 */
export function tolerantArguments(text: string): TolerantArguments | undefined {
  const body = unfenced(text);
  const source = body ?? text;
  const parsed = parseTolerantValue(source, skipSpace(source, 0, source.length), source.length);
  if (!parsed.ok || !isJsonObject(parsed.value) || skipSpace(source, parsed.end, source.length) !== source.length) return undefined;
  if (parsed.containersClosedAtLimit.length > 0 || parsed.scalarAtTextEnd !== undefined) return undefined;
  const fenced = body === undefined ? '' : ', in a code fence';
  return { json: toCompactJson(parsed.value), warning: `repaired the arguments' syntax: they were not valid JSON${fenced}, and were read as a model means them (trailing commas, single quotes, unquoted keys, Python's True, False and None)` };
}

/** The text inside one Markdown code fence that is the whole of `text`, else undefined. */
function unfenced(text: string): string | undefined {
  const trimmed = text.trim();
  if (trimmed.length < 2 * FENCE.length || !trimmed.startsWith(FENCE) || !trimmed.endsWith(FENCE)) return undefined;
  const lineEnd = trimmed.indexOf('\n');
  // The info string (`json`) runs to the end of the opening line; a fence on one line has none.
  const from = lineEnd === -1 ? FENCE.length : lineEnd + 1;
  const to = trimmed.length - FENCE.length;
  if (from > to) return undefined;
  const inside = trimmed.slice(from, to);
  return inside.includes(FENCE) ? undefined : inside;
}
