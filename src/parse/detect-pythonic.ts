import { blankSpans } from './blank-spans';
import { endOfTurn } from './end-tokens';
import type { FoundCalls } from './found-calls';
import { skipSpace } from './marker-finder';
import { readCallLines, readCallList } from './pythonic-calls';
import { createTokenFinder } from './special-tokens';
import type { WorkBudget } from './tolerant-json';
import type { PositionalParameterLookup } from './types';

/**
 * The tokens around a list of calls: Llama 4's, and Liquid LFM2's; and Olmo 3's tags, around calls
 * one a line with no list (`<function_calls>\nget_weather(city="Paris")\nget_time()\n</function_calls>`).
 */
const MARKERS: readonly Marker[] = [
  { open: '<|python_start|>', close: '<|python_end|>', lines: false },
  { open: '<|tool_call_start|>', close: '<|tool_call_end|>', lines: false },
  { open: '<function_calls>', close: '</function_calls>', lines: true },
];

/** A marker's tokens, and whether the calls after it may stand one a line rather than in a list. */
interface Marker {
  readonly open: string;
  readonly close: string;
  readonly lines: boolean;
}

/**
 * Calls written as a Python list of calls with keyword arguments (`[get_weather(city="Paris",
 * days=3), get_time()]`), as Llama 3.2 and 4 write them under a pythonic template (vLLM's and
 * SGLang's `pythonic` parsers) and Liquid LFM2 writes them: the whole text, reasoning aside, being
 * the list (as vLLM takes it: a list in prose is an example, or code), or the list after
 * Llama 4's `<|python_start|>` or LFM2's `<|tool_call_start|>` anywhere, up to its optional closing
 * token; or, after Olmo 3's `<function_calls>`, calls one after another (a line each) up to
 * `</function_calls>` or the text's end. Values are Python literals, read tolerantly (`True`,
 * `None`, single quotes, triple-quoted and raw strings, lists, tuples, dicts; see `PythonLiteralParser`). A keyword given twice, an expression, or a list cut off makes the whole
 * list no call, as in vLLM, and its text stays; so does a list of more than 1,024 calls. A call
 * with positional arguments (`get_weather("Paris")`) is returned when `positional` names them;
 * else it is `unnamedArguments`, left with a warning (before, the whole list was no call, unsaid).
 */
export function* detectPythonic(text: string, budget: WorkBudget, positional?: PositionalParameterLookup): Generator<FoundCalls> {
  // The list's `[` found natively first: text whose reasoning was blanked out may be megabytes of spaces.
  const first = text.indexOf('[');
  if (first >= 0 && skipSpace(text, 0, first) === first) {
    const list = readCallList(text, first, budget, positional);
    const end = list === undefined ? -1 : endOfTurn(text, skipSpace(text, list.end, text.length));
    if (list !== undefined && end === text.length) {
      yield { start: first, end, calls: list.calls, format: 'pythonic' };
      return;
    }
  }
  const opens = createTokenFinder(text, MARKERS.map((marker) => marker.open));
  for (let from = 0; ; ) {
    const at = opens.next(from);
    const marker = at < 0 ? undefined : MARKERS.find((m) => text.startsWith(m.open, at));
    if (marker === undefined) return;
    const listAt = skipSpace(text, at + marker.open.length, text.length);
    const list = text.charCodeAt(listAt) === 0x5b ? readCallList(text, listAt, budget, positional) : marker.lines ? readCallLines(text, listAt, marker.close, budget, positional) : undefined;
    if (list === undefined) {
      from = at + marker.open.length;
      continue;
    }
    const after = skipSpace(text, list.end, text.length);
    const end = text.startsWith(marker.close, after) ? after + marker.close.length : list.end;
    yield { start: at, end, calls: list.calls, format: 'pythonic' };
    from = end;
  }
}

/**
 * The text with each pythonic call list blanked out, for the same reason as `withoutQwenCalls`: a
 * dict argument (`spec={'name': 'rm', 'arguments': {}}`) is no call of its own.
 */
export function withoutPythonicCalls(text: string, budget: WorkBudget): string {
  return blankSpans(text, detectPythonic(text, budget));
}
