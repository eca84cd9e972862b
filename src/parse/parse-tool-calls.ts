import { blankSpans } from './blank-spans';
import { createCallId } from './call-id';
import { widenToWrappers } from './call-wrappers';
import { detectFences } from './detect-fence';
import { detectActionBlob } from './detect-action-blob';
import { detectDeepSeek } from './detect-deepseek';
import { detectDsml, withoutDsmlCalls } from './detect-dsml';
import { detectFunctionTags } from './detect-function-tag';
import { detectFunctionary } from './detect-functionary';
import { detectGemma } from './detect-gemma';
import { detectGlmXml, withoutGlmCalls } from './detect-glm-xml';
import { detectHarmony } from './detect-harmony';
import { detectHermes } from './detect-hermes';
import { detectKimi } from './detect-kimi';
import { detectKimiXtml } from './detect-kimi-xtml';
import { detectAnthropicXml, detectMiniMax, withoutAnthropicCalls, withoutMiniMaxCalls } from './detect-minimax';
import { detectMistral } from './detect-mistral';
import { detectPythonTag } from './detect-python-tag';
import { detectPythonic, withoutPythonicCalls } from './detect-pythonic';
import { detectQwenXml, withoutQwenCalls } from './detect-qwen-xml';
import { detectReAct } from './detect-react';
import { detectModuleCallLines, detectToolCode } from './detect-tool-code';
import type { Detector, FoundCalls } from './found-calls';
import { scanForCalls } from './object-scanner';
import { outsideCode } from './code-spans';
import { maskReasoning } from './reasoning-mask';
import { DroppedCalls } from './parse-warnings';
import { tidyRemaining } from './remaining-text';
import { chooseSpans, type ChosenSpan } from './span-choice';
import type { WorkBudget } from './tolerant-json';
import type { ParseOptions, ParseResult, ParsedCall, PositionalParameterLookup, TextParameterLookup } from './types';

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
 * Dialects with markers, read together and sharing one work budget: an output may mix them
 * (`<|python_tag|>` then `<function=...>`), and their calls are returned in text order, with the
 * format of the first. A marker quoted in another marked call's arguments is not a call (see
 * `chooseSpans`). The XML-like dialects, whose values are bare text, read a value as text where
 * `textParameters` says its tool asks for text. They and the pythonic lists are blanked out for
 * the later tiers (`without`, see `withoutQwenCalls`), in this order. Pythonic calls' positional
 * arguments are named by `positional`. Functionary's headers are no marker in code (`>>>` is
 * Python's prompt), as JSON there is none (see `outsideCode`).
 */
const markedDialects = (textParameters: TextParameterLookup | undefined, positional: PositionalParameterLookup | undefined): readonly MarkedDialect[] => [
  { detect: detectHermes },
  { detect: detectMistral },
  { detect: detectPythonTag },
  { detect: detectFunctionTags },
  { detect: (text) => detectQwenXml(text, textParameters), without: withoutQwenCalls },
  { detect: (text) => detectGlmXml(text, textParameters), without: withoutGlmCalls },
  { detect: detectHarmony },
  { detect: detectDeepSeek },
  { detect: detectDsml, without: withoutDsmlCalls },
  { detect: (text) => detectMiniMax(text, textParameters), without: withoutMiniMaxCalls },
  { detect: (text) => detectAnthropicXml(text, textParameters), without: withoutAnthropicCalls },
  { detect: detectKimi },
  { detect: detectKimiXtml },
  { detect: (text, budget) => detectPythonic(text, budget, positional), without: (text) => withoutPythonicCalls(text, createBudget(text)) },
  { detect: detectGemma },
  { detect: (text, budget) => detectToolCode(text, budget, positional) },
  { detect: (text, budget) => outsideCode(text, detectModuleCallLines(text, budget, positional)) },
  { detect: (text, budget) => outsideCode(text, detectFunctionary(text, budget)) },
];

/** A marked dialect: how its calls are found, and, for one blanked out for the later tiers, how. */
interface MarkedDialect {
  readonly detect: Detector;
  readonly without?: (text: string) => string;
}

/**
 * Bare JSON in prose, the likeliest to be a false positive, with a work budget of its own: text
 * the other dialects parsed (a long fenced JSON example) must not starve it.
 */
const detectBareJson: Detector = (text, budget) => scanForCalls(text, 0, text.length, false, budget);

/**
 * Extracts the tool calls in raw model output (the `ParseToolCalls` RPC): Hermes/Qwen
 * `<tool_call>` tags, Qwen3-Coder XML (`<function=name><parameter=key>`, see `detectQwenXml`),
 * GLM-4.5 XML (`<tool_call>name<arg_key>`, see `detectGlmXml`), gpt-oss harmony messages
 * (`<|channel|>commentary to=functions.name<|message|>`, see `detectHarmony`), DeepSeek
 * V3/R1/V3.1 and Kimi K2 tool-call sections (see `detectDeepSeek`, `detectKimi`), Kimi K3's XTML
 * tools channel (see `detectKimiXtml`), DeepSeek V3.2
 * DSML (`<｜DSML｜invoke name="name">`, see `detectDsml`), MiniMax-M2 XML
 * (`<minimax:tool_call><invoke name="name">`, see `detectMiniMax`),
 * Llama 3.x JSON (with or without `<|python_tag|>`, or `<function=...>`),
 * Mistral `[TOOL_CALLS]`, Gemma 4 and FunctionGemma (`<|tool_call>call:name{key:<|"|>value<|"|>}`,
 * see `detectGemma`), pythonic lists of calls (`[name(key=value)]`, see `detectPythonic`), Gemma
 * 3's ```` ```tool_code ```` fences (see `detectToolCode`), Functionary v3.2's `>>>name` messages
 * (see `detectFunctionary`), a ReAct `Action:`/`Action Input:` pair (see `detectReAct`),
 * LangChain's `{"action", "action_input"}` blob (see `detectActionBlob`),
 * OpenAI `tool_calls` / `function` objects, and any of these in a
 * Markdown fence, read tolerantly (see `parseTolerantValue`); a call cut off before its
 * arguments, or inside them, is not a call. Calls drafted in reasoning (`<think>` blocks and the
 * like, see `maskReasoning`) are ignored. With `offeredTools` non-empty, a call naming any other
 * tool is not a call. With `options.textParameters`, a Qwen3-Coder, GLM or MiniMax value that its tool's
 * schema asks for as text stays text (`12345` for a zip code is not the number 12345); with
 * `options.positionalParameters`, a pythonic call's positional arguments are named. End-of-turn
 * tokens a server kept after the calls are no remaining text (see `tidyRemaining`). Runs in
 * time linear in the text and never throws: whatever goes wrong, the answer is format `none`
 * with the whole text remaining.
 */
export function parseToolCalls(text: string, offeredTools?: readonly string[], options?: ParseOptions): ParseResult {
  const input = typeof text === 'string' ? text : '';
  try {
    const maxChars = countOption(options?.maxInputChars, DEFAULT_MAX_INPUT_CHARS);
    const maxCalls = countOption(options?.maxCalls, DEFAULT_MAX_CALLS);
    if (input.length > maxChars || maxCalls === 0) return nothingFound(input);
    const offered = new Set(Array.isArray(offeredTools) ? offeredTools.filter((n) => typeof n === 'string') : []);
    const searched = maskReasoning(input, createBudget(input));
    const dropped = new DroppedCalls();
    for (const tier of detectInTiers(searched, askedOnce(options?.textParameters), askedOnce(options?.positionalParameters))) {
      const accepted = chooseSpans(tier, offered, maxCalls, dropped);
      if (accepted.length > 0) return dropped.noted(buildResult(input, accepted), searched, maxCalls);
    }
    return dropped.noted(nothingFound(input), searched, maxCalls);
  } catch (error) {
    try {
      options?.onInternalError?.(error);
    } catch {
      // The hook is for logging; a failing logger must not turn into a thrown parse.
    }
    return nothingFound(input);
  }
}

/**
 * The detectors, lazily, in tiers, most specific first: the calls returned are those of the
 * first tier with an offered call, and the calls of later tiers stay in the remaining text. JSON
 * in prose or in a fence beside marked calls is an example or a recap (the model marked what it
 * meant to call), and a call written bare and then again fenced must not run twice. So tiers are
 * not merged: a marked call quoted in a fenced or bare call's arguments (a `<tool_call>` tag in a
 * string) is still taken for a call, as seeing that it is quoted would mean parsing every JSON
 * value before every marker, in hostile input about three times the work of one scan. Fences
 * share the marked dialects' work budget. The later tiers read the text with Qwen, GLM, DSML,
 * MiniMax, Anthropic and pythonic calls blanked out (see `withoutQwenCalls`), worked out when the
 * first of them is read.
 */
function detectInTiers(text: string, textParameters: TextParameterLookup | undefined, positional: PositionalParameterLookup | undefined): (readonly Iterable<FoundCalls>[])[] {
  const markedBudget = createBudget(text);
  const marked = markedDialects(textParameters, positional).map(({ detect, without }) => {
    const spans = detect(text, markedBudget);
    return without === undefined ? { spans } : { without, ...recorded(spans) };
  });
  // Each blanking reads what the one before left. While that is the text itself, the first tier's
  // reading of the dialect is reused when it was read to its end (the first tier took no call, so
  // it was): a hostile text had cost a second reading of every blanked dialect.
  const withoutMarkedCalls = (): string =>
    marked.reduce((current, dialect) => {
      if (!('without' in dialect)) return current;
      return current === text && dialect.ended() ? blankSpans(current, dialect.found) : dialect.without(current);
    }, text);
  let unmarked: string | undefined;
  const unmarkedText = (): string => (unmarked ??= withoutMarkedCalls());
  return [
    marked.map((dialect) => dialect.spans),
    // ReAct actions beside fences: their input may be fenced JSON, which names no call of its own.
    [
      lazily(() => detectFences(unmarkedText(), markedBudget)),
      lazily(() => outsideCode(unmarkedText(), detectReAct(unmarkedText(), markedBudget, positional))),
      lazily(() => outsideCode(unmarkedText(), detectActionBlob(unmarkedText(), markedBudget, positional))),
    ],
    // Not in code: JSON in a python fence or in inline code is an example, not a call.
    [lazily(() => outsideCode(unmarkedText(), detectBareJson(unmarkedText(), createBudget(text))))],
  ];
}

/** `lookup`, asked once per distinct tool name: a text may name one tool in many calls. */
function askedOnce<T>(lookup: ((tool: string) => T | undefined) | undefined): ((tool: string) => T | undefined) | undefined {
  if (typeof lookup !== 'function') return undefined;
  const answers = new Map<string, T | undefined>();
  return (tool) => {
    if (answers.has(tool)) return answers.get(tool);
    const answer = lookup(tool);
    answers.set(tool, answer);
    return answer;
  };
}

/** A detector's spans as they are pulled, kept in `found`; `ended` once it was read to its end. */
function recorded(source: Iterable<FoundCalls>): { spans: Iterable<FoundCalls>; found: FoundCalls[]; ended: () => boolean } {
  const found: FoundCalls[] = [];
  let done = false;
  function* pull(): Generator<FoundCalls> {
    for (const span of source) {
      found.push(span);
      yield span;
    }
    done = true;
  }
  return { spans: pull(), found, ended: () => done };
}

/** The spans `detect` finds, not looked for until the first is asked for. */
function* lazily(detect: () => Iterable<FoundCalls>): Generator<FoundCalls> {
  yield* detect();
}

function createBudget(text: string): WorkBudget {
  return { remaining: WORK_PER_CHAR * text.length + WORK_BASE };
}

/** A non-negative integer option, or its default when unset or not such a number. */
function countOption(value: number | undefined, fallback: number): number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : fallback;
}

function nothingFound(text: string): ParseResult {
  return { calls: [], remainingText: text.trim(), format: 'none' };
}

function buildResult(text: string, spans: readonly ChosenSpan[]): ParseResult {
  const usedIds = new Set<string>();
  const calls: ParsedCall[] = spans.flatMap((span) => span.calls).map((call) => {
    // A model that repeats an id gets a fresh one for the repeat: results are matched by id.
    const id = call.id !== undefined && !usedIds.has(call.id) ? call.id : createCallId();
    usedIds.add(id);
    return { id, name: call.name, arguments: call.arguments };
  });
  const kept: string[] = [];
  let copied = 0;
  let open: string | undefined;
  spans.forEach((span, i) => {
    if (span.keepText) {
      open = undefined;
      return;
    }
    const widened = widenToWrappers(text, span.start, span.end, copied, spans[i + 1]?.start ?? text.length, open);
    kept.push(text.slice(copied, widened.start));
    if (widened.end > copied) copied = widened.end;
    open = widened.open;
  });
  kept.push(text.slice(copied));
  const format = spans[0]?.format ?? 'none';
  return { calls, remainingText: tidyRemaining(kept.join('').trim(), format), format };
}
