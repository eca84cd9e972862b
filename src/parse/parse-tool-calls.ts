import { createCallId } from './call-id';
import { detectFences } from './detect-fence';
import { detectFunctionTags } from './detect-function-tag';
import { detectHermes } from './detect-hermes';
import { detectMistral } from './detect-mistral';
import { detectPythonTag } from './detect-python-tag';
import type { Detector, FoundCalls } from './found-calls';
import { scanForCalls } from './object-scanner';
import { maskReasoning } from './reasoning-mask';
import type { WorkBudget } from './tolerant-json';
import type { ParseOptions, ParseResult, ParsedCall } from './types';

/** Texts longer than this are not searched unless `maxInputChars` says otherwise: 4 MiB. */
export const DEFAULT_MAX_INPUT_CHARS = 4 * 1024 * 1024;
const DEFAULT_MAX_CALLS = 1024;
/**
 * Characters the parses of one work budget may read together, per character of text, plus a
 * base. Honest input needs about one pass, and the base covers the retries of short texts;
 * hostile input that makes the scanners retry is cut off here, which keeps parsing linear.
 */
const WORK_PER_CHAR = 1;
const WORK_BASE = 65_536;

/**
 * Dialects with markers, tried in order, most specific first; they share one work budget. The
 * first detector that yields an offered call wins: an output mixing dialects (a bare call, then
 * a fenced one) gets the calls of that one dialect, the others staying in the remaining text.
 */
const MARKED: readonly Detector[] = [detectHermes, detectMistral, detectPythonTag, detectFunctionTags, detectFences];

/**
 * Bare JSON in prose, tried last as the likeliest to be a false positive, with a work budget of
 * its own: text the marked dialects parsed (a long fenced JSON example) must not starve it.
 */
const detectBareJson: Detector = (text, budget) => scanForCalls(text, 0, text.length, false, budget);

/**
 * Extracts the tool calls in raw model output (the `ParseToolCalls` RPC): Hermes/Qwen
 * `<tool_call>` tags, Llama 3.x JSON (with or without `<|python_tag|>`, or `<function=...>`),
 * Mistral `[TOOL_CALLS]`, OpenAI `tool_calls` / `function` objects, and any of these in a
 * Markdown fence, read tolerantly (see `parseTolerantValue`). Calls drafted inside `<think>`
 * blocks are ignored. With `offeredTools` non-empty, a call naming any other tool is not a
 * call. Runs in time linear in the text and never throws: whatever goes wrong, the answer is
 * format `none` with the whole text remaining.
 */
export function parseToolCalls(text: string, offeredTools?: readonly string[], options?: ParseOptions): ParseResult {
  const input = typeof text === 'string' ? text : '';
  try {
    const maxChars = countOption(options?.maxInputChars, DEFAULT_MAX_INPUT_CHARS);
    const maxCalls = countOption(options?.maxCalls, DEFAULT_MAX_CALLS);
    if (input.length > maxChars || maxCalls === 0) return nothingFound(input);
    const offered = new Set(Array.isArray(offeredTools) ? offeredTools.filter((n) => typeof n === 'string') : []);
    const searched = maskReasoning(input, createBudget(input));
    const markedBudget = createBudget(input);
    for (const detect of MARKED) {
      const accepted = acceptCalls(detect(searched, markedBudget), offered, maxCalls);
      if (accepted.length > 0) return buildResult(input, accepted);
    }
    const accepted = acceptCalls(detectBareJson(searched, createBudget(input)), offered, maxCalls);
    return accepted.length > 0 ? buildResult(input, accepted) : nothingFound(input);
  } catch (error) {
    try {
      options?.onInternalError?.(error);
    } catch {
      // The hook is for logging; a failing logger must not turn into a thrown parse.
    }
    return nothingFound(input);
  }
}

function createBudget(text: string): WorkBudget {
  return { remaining: WORK_PER_CHAR * text.length + WORK_BASE };
}

/** A non-negative integer option, or its default when unset or not such a number. */
function countOption(value: number | undefined, fallback: number): number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : fallback;
}

/**
 * The spans with calls naming offered tools (keeping only those calls), up to `maxCalls` calls:
 * the span that reaches the limit is cut to fit, and later spans are left alone.
 */
function acceptCalls(spans: Iterable<FoundCalls>, offered: ReadonlySet<string>, maxCalls: number): FoundCalls[] {
  const accepted: FoundCalls[] = [];
  let count = 0;
  for (const span of spans) {
    const calls = span.calls.filter((call) => offered.size === 0 || offered.has(call.name));
    if (calls.length === 0) continue;
    const kept = calls.slice(0, maxCalls - count);
    accepted.push({ ...span, calls: kept });
    count += kept.length;
    if (count >= maxCalls) break;
  }
  return accepted;
}

function nothingFound(text: string): ParseResult {
  return { calls: [], remainingText: text.trim(), format: 'none' };
}

function buildResult(text: string, spans: readonly FoundCalls[]): ParseResult {
  const usedIds = new Set<string>();
  const calls: ParsedCall[] = spans.flatMap((span) => span.calls).map((call) => {
    // A model that repeats an id gets a fresh one for the repeat: results are matched by id.
    const id = call.id !== undefined && !usedIds.has(call.id) ? call.id : createCallId();
    usedIds.add(id);
    return { id, name: call.name, arguments: call.arguments };
  });
  const kept: string[] = [];
  let copied = 0;
  for (const span of spans) {
    kept.push(text.slice(copied, span.start));
    if (span.end > copied) copied = span.end;
  }
  kept.push(text.slice(copied));
  return { calls, remainingText: kept.join('').trim(), format: spans[0]?.format ?? 'none' };
}
