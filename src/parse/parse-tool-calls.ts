import { createCallIds } from './call-id';
import { detectFences } from './detect-fence';
import { detectFunctionTags } from './detect-function-tag';
import { detectHermes } from './detect-hermes';
import { detectMistral } from './detect-mistral';
import { detectPythonTag } from './detect-python-tag';
import type { Detector, FoundCalls } from './found-calls';
import { scanForCalls } from './object-scanner';
import { maskReasoning } from './reasoning-mask';
import type { ParseOptions, ParseResult, ParsedCall } from './types';

/** The default `maxInputChars`: 4 MiB, the default gRPC message limit. */
const DEFAULT_MAX_INPUT_CHARS = 4 * 1024 * 1024;

/**
 * Dialects tried in order, most specific first; the first that yields an offered call wins.
 * Bare JSON in prose comes last, as it is the likeliest to be a false positive.
 */
const DETECTORS: readonly Detector[] = [
  detectHermes,
  detectMistral,
  detectPythonTag,
  detectFunctionTags,
  detectFences,
  (text) => scanForCalls(text, 0, text.length, false),
];

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
    const maxChars = options?.maxInputChars ?? DEFAULT_MAX_INPUT_CHARS;
    if (input.length > maxChars) return nothingFound(input);
    const offered = new Set((Array.isArray(offeredTools) ? offeredTools : []).filter((n) => typeof n === 'string'));
    const searched = maskReasoning(input);
    for (const detect of DETECTORS) {
      const accepted = detect(searched)
        .map((span) => ({ ...span, calls: span.calls.filter((call) => offered.size === 0 || offered.has(call.name)) }))
        .filter((span) => span.calls.length > 0);
      if (accepted.length > 0) return buildResult(input, accepted);
    }
    return nothingFound(input);
  } catch {
    return nothingFound(input);
  }
}

function nothingFound(text: string): ParseResult {
  return { calls: [], remainingText: text.trim(), format: 'none' };
}

function buildResult(text: string, spans: readonly FoundCalls[]): ParseResult {
  const found = spans.flatMap((span) => span.calls);
  const fresh = createCallIds(found.length);
  const usedIds = new Set<string>();
  const calls: ParsedCall[] = found.map((call, index) => {
    // A model that repeats an id gets a fresh one for the repeat: results are matched by id.
    const id = call.id !== undefined && !usedIds.has(call.id) ? call.id : (fresh[index] ?? '');
    usedIds.add(id);
    return { id, name: call.name, arguments: call.arguments };
  });
  const kept: string[] = [];
  let copied = 0;
  for (const span of spans) {
    kept.push(text.slice(copied, span.start));
    copied = Math.max(copied, span.end);
  }
  kept.push(text.slice(copied));
  return { calls, remainingText: kept.join('').trim(), format: spans[0]?.format ?? 'none' };
}
