import type { CandidateCall } from './call-shapes';
import type { FoundCalls } from './found-calls';
import { createMarkerFinder, skipSpace } from './marker-finder';
import { GEMINI_MODULE, readCallLines, readCallList } from './pythonic-calls';
import type { WorkBudget } from './tolerant-json';
import type { PositionalParameterLookup } from './types';

const OPEN = '```tool_code';
const CLOSE = '```';
/** A fence closes at a line of its own that begins with three backticks. */
const LINE_CLOSE = '\n```';

/**
 * Gemma 3's calls: a Markdown fence of language `tool_code` (its function-calling prompt's) that
 * holds pythonic calls and nothing else: one a line (`get_weather(city="Paris")`, or in
 * `print(...)`), or a list of them (`[get_weather(city="Paris"), get_time()]`). Values are Python
 * literals (see `readCallList`); positional arguments are named by `positional`. A fence that
 * holds anything else (an assignment, a loop, an expression) is code, not calls, and stays, as a
 * fence never closed that does not read whole. The fence closes at the next line that begins with
 * ```` ``` ````, or the text's end.
 */
export function* detectToolCode(text: string, budget: WorkBudget, positional?: PositionalParameterLookup): Generator<FoundCalls> {
  const opens = createMarkerFinder(text, OPEN);
  const closes = createMarkerFinder(text, LINE_CLOSE);
  for (let open = opens.next(0); open >= 0; ) {
    const bodyAt = open + OPEN.length;
    // `tool_code` must be the whole language tag (not `tool_codex`), and the fence begin a line.
    if (!isLineStart(text, open) || !isLineEnd(text, bodyAt)) {
      open = opens.next(bodyAt);
      continue;
    }
    const close = closes.next(bodyAt);
    const from = skipSpace(text, bodyAt, text.length);
    const calls = text.charCodeAt(from) === 0x5b ? readCallList(text, from, budget, positional) : readCallLines(text, from, CLOSE, budget, positional, true);
    const after = calls === undefined ? -1 : skipSpace(text, calls.end, text.length);
    const closed = text.startsWith(CLOSE, after) && after === close + 1;
    if (calls !== undefined && (closed || after === text.length)) {
      yield { start: open, end: closed ? after + CLOSE.length : calls.end, calls: calls.calls, format: 'tool_code' };
    }
    open = close < 0 ? -1 : opens.next(close + LINE_CLOSE.length);
  }
}

/** A line Gemini wrote a call on without its fence: `default_api.get_weather(city="Paris")`, maybe in `print(...)`. */
const MODULE_LINE = /^[ \t]*(?:print\([ \t]*)?default_api\./gm;

/**
 * Gemini's calls written bare, without the ```` ```tool_code ```` fence: lines that hold only
 * calls of `default_api.` functions (see `GEMINI_MODULE`), or one in `print(...)`; a run of such
 * lines is one span. The module's name marks them; a line that holds anything more is text.
 */
export function* detectModuleCallLines(text: string, budget: WorkBudget, positional?: PositionalParameterLookup): Generator<FoundCalls> {
  if (!text.includes(GEMINI_MODULE)) return;
  let run: { start: number; end: number; calls: CandidateCall[] } | undefined;
  MODULE_LINE.lastIndex = 0;
  for (let line = MODULE_LINE.exec(text); line !== null && budget.remaining > 0; line = MODULE_LINE.exec(text)) {
    const start = line.index;
    const lineEnd = text.indexOf('\n', start);
    const lineText = text.slice(start, lineEnd < 0 ? text.length : lineEnd).trimEnd();
    MODULE_LINE.lastIndex = lineEnd < 0 ? text.length : lineEnd;
    const read = readCallLines(lineText, skipSpace(lineText, 0, lineText.length), '\n', budget, positional, true);
    if (read === undefined || read.end !== lineText.length) continue;
    if (run !== undefined && skipSpace(text, run.end, start) === start) {
      run.calls.push(...read.calls);
      run.end = start + lineText.length;
      continue;
    }
    if (run !== undefined) yield { ...run, format: 'tool_code' };
    run = { start, end: start + lineText.length, calls: [...read.calls] };
  }
  if (run !== undefined) yield { ...run, format: 'tool_code' };
}

function isLineStart(text: string, at: number): boolean {
  let pos = at;
  while (pos > 0 && (text.charCodeAt(pos - 1) === 0x20 || text.charCodeAt(pos - 1) === 0x09)) pos--;
  return pos === 0 || text.charCodeAt(pos - 1) === 0x0a;
}

function isLineEnd(text: string, at: number): boolean {
  let pos = at;
  while (text.charCodeAt(pos) === 0x20 || text.charCodeAt(pos) === 0x09 || text.charCodeAt(pos) === 0x0d) pos++;
  return pos >= text.length || text.charCodeAt(pos) === 0x0a;
}
