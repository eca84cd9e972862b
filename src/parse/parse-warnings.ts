import type { CandidateCall } from './call-shapes';
import type { FoundCalls } from './found-calls';
import { skipSpace } from './marker-finder';
import type { ParseResult } from './types';

/**
 * What a parse found and did not return, for `ParseResult.warnings`: a backend that got no call
 * back cannot tell a model that wrote none from one whose call was malformed, cut off or named a
 * tool it was not offered, and would show the model's call to the user as text instead of telling
 * the model. Each stays in the remaining text as written.
 */
export class DroppedCalls {
  /**
   * Where the spans the calls were found in start and end, returned or not: a marker inside one is
   * no stray. Numbers, not the spans: kept to the parse's end, thousands of spans and their calls
   * went to the old generation (a hostile MiB's parse took 1.25x).
   */
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];
  private readonly notOffered = new Set<string>();
  private readonly cutOff = new Set<string>();
  private readonly unnamed = new Set<string>();
  /** Returned calls whose arguments were not under `arguments` or `parameters`: where they were read from, per name. */
  private readonly readElsewhere = new Map<string, string>();
  private pastLimit = false;

  /**
   * A span whose calls were read: `offered` are those it may return (a subsequence of its calls,
   * in order), the others not offered or cut off.
   */
  seen(span: FoundCalls, offered: readonly CandidateCall[]): void {
    this.starts.push(span.start);
    this.ends.push(span.end);
    for (const call of offered) if (call.readFrom !== undefined && this.readElsewhere.size <= MAX_NAMES) this.readElsewhere.set(call.name, call.readFrom);
    if (offered.length === span.calls.length || (this.cutOff.size > MAX_NAMES && this.notOffered.size > MAX_NAMES && this.unnamed.size > MAX_NAMES)) return;
    let next = 0;
    for (const call of span.calls) {
      if (call === offered[next]) {
        next++;
        continue;
      }
      // One name past those listed says there were more.
      const names = call.cutOff === true ? this.cutOff : call.unnamedArguments === true ? this.unnamed : this.notOffered;
      if (names.size <= MAX_NAMES) names.add(call.name);
    }
  }

  /** Offered calls came past maxCalls, or a span waits after it. */
  pastTheLimit(): void {
    this.pastLimit = true;
  }

  /** `result` with the warnings, when there are any (see {@link warnings}). */
  noted(result: ParseResult, searched: string, maxCalls: number): ParseResult {
    const warnings = this.warnings(searched, maxCalls);
    return warnings.length === 0 ? result : { ...result, warnings };
  }

  /** The warnings, with the first stray marker of `searched` (reasoning blanked out) outside every span read. */
  warnings(searched: string, maxCalls: number): string[] {
    const out: string[] = [];
    if (this.notOffered.size > 0) out.push(`${listed(this.notOffered)} not offered: left in remaining_text`);
    if (this.cutOff.size > 0) out.push(`${listed(this.cutOff)} cut off before its arguments ended: left in remaining_text`);
    if (this.unnamed.size > 0) out.push(`${listed(this.unnamed)} written with arguments by position that its tool's schema does not name: left in remaining_text`);
    for (const [name, from] of [...this.readElsewhere].slice(0, MAX_NAMES)) out.push(`${listed(new Set([name]))} returned with its arguments read from ${from}, not "arguments"`);
    if (this.pastLimit) out.push(`calls past the limit of ${maxCalls} per turn were left in remaining_text`);
    // Past the limit the spans after it were not read: their markers are no strays.
    const readUpTo = this.pastLimit ? this.ends.reduce((last, end) => Math.max(last, end), 0) : searched.length;
    const stray = strayMarker(searched.slice(0, readUpTo), this.starts, this.ends);
    if (stray !== undefined) {
      out.push(`a ${JSON.stringify(stray.marker)} marker at character ${stray.at} did not read as a call (malformed, or cut off): left in remaining_text`);
    }
    return out;
  }
}

/** Most names listed in a warning: a text may hold thousands of calls. */
const MAX_NAMES = 8;
const NAME_CHARS = 64;

/** `a call of "x"`, `calls of "x", "y"`, with at most {@link MAX_NAMES} names, each cut to 64 characters. */
function listed(names: ReadonlySet<string>): string {
  const shown = [...names].slice(0, MAX_NAMES).map((name) => JSON.stringify(name.length > NAME_CHARS ? `${name.slice(0, NAME_CHARS)}...` : name));
  const more = names.size > MAX_NAMES ? ` and more` : '';
  return `${names.size === 1 ? 'a call of' : 'calls of'} ${shown.join(', ')}${more}${names.size === 1 ? ' was' : ' were'}`;
}

/**
 * The markers that open a call in the dialects read (their first token): found outside every
 * span of calls, the call they open did not parse. Qwen's and Hermes' `<tool_call>`, Llama's
 * tags, DSML's, MiniMax's, Anthropic's and Olmo's blocks, Llama 4's, LFM2's, Gemma's and
 * FunctionGemma's, Kimi's sections, DeepSeek's, Mistral's `[TOOL_CALLS]`, gpt-oss's recipient and
 * Gemma 3's ```` ```tool_code ```` fence; the tags under one `<`, so that each `<` of a text costs
 * one attempt (reasoning-mask.ts's too).
 */
const MARKERS =
  /```tool_code\b|<(?:tool_call>|\|(?:python_tag|python_start|tool_call_start|tool_calls_section_begin|open\|>tools<\|sep)\|>|\|tool_call>|function=|function_calls>|minimax:tool_call>|start_function_call>|[\uff5c|]DSML[\uff5c|]invoke|｜tool▁calls▁begin｜>)|\[TOOL_CALLS\]|to=functions\./g;

/**
 * The first marker outside every span (`starts[i]` to `ends[i]`) and not just before one (a later
 * tier's span of the call it opens begins after it, at its JSON): linear, the spans sorted once and
 * swept with the markers.
 */
function strayMarker(searched: string, starts: readonly number[], ends: readonly number[]): { marker: string; at: number } | undefined {
  MARKERS.lastIndex = 0;
  // Most texts hold no marker, or only in the spans: none, and the spans need no sorting.
  if (!MARKERS.test(searched)) return undefined;
  const order = starts.map((_, i) => i).sort((a, b) => starts[a]! - starts[b]!);
  const startSet = new Set(starts);
  let next = 0;
  let coveredUntil = 0;
  MARKERS.lastIndex = 0;
  for (let found = MARKERS.exec(searched); found !== null; found = MARKERS.exec(searched)) {
    const at = found.index;
    for (; next < order.length && starts[order[next]!]! <= at; next++) coveredUntil = Math.max(coveredUntil, ends[order[next]!]!);
    if (at < coveredUntil || startSet.has(skipSpace(searched, at + found[0].length, searched.length))) continue;
    return { marker: found[0], at };
  }
  return undefined;
}
