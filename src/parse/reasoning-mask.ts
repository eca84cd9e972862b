import { blankSpans } from './blank-spans';
import { mayStartCallJson } from './call-precheck';
import { dsmlCallSpans } from './detect-dsml';
import { glmCallSpans } from './detect-glm-xml';
import { miniMaxCallSpans } from './detect-minimax';
import { qwenCallSpans } from './detect-qwen-xml';
import { skipSpace } from './marker-finder';
import { firstClosingEnd, mentionedOpenings, nextReasoningOpening, reasoningBlockEnd, unopenedClosings, type ReasoningOpening } from './reasoning-tags';
import { parseTolerantValue, type WorkBudget } from './tolerant-json';
import { skipFillers } from './value-sequence';

/**
 * Call markers (a DSML or MiniMax call's span begins at its block's tag or its `invoke` tag), the
 * tags under one `<` so that each `<` of a text costs one attempt, and the tag that ends what
 * follows a marker when it is not one JSON value.
 */
const CALL_MARKERS =
  /<(?:tool_call>|\|python_tag\|>|function=|[\uff5c|]DSML[\uff5c|](?:invoke|function_calls>|tool_calls>)|minimax:tool_call>|function_calls>|invoke\s|\|python_start\|>|\|tool_call_start\|>|\|tool_call>|start_function_call>|\|open\|>tools<\|sep\|>)|\[TOOL_CALLS\]/g;
/** The markers of the calls whose spans `xmlCallEnd` knows: DSML's, MiniMax's and Anthropic's (an Olmo block is none). */
const INVOKE_MARKER = /^<(?:[\uff5c|]DSML|minimax:|function_calls>|invoke)/;
const MARKER_ENDS: Readonly<Record<string, string>> = {
  '<tool_call>': '</tool_call>',
  '<function=': '</function>',
  '<|python_start|>': '<|python_end|>',
  '<|tool_call_start|>': '<|tool_call_end|>',
  '<|tool_call>': '<tool_call|>',
  '<start_function_call>': '<end_function_call>',
  '<|open|>tools<|sep|>': '<|close|>tools<|sep|>',
};
/** A name and its `[ARGS]` after Mistral's `[TOOL_CALLS]` (v11 and later, an id in `[CALL_ID]` allowed). */
const MISTRAL_NAME = /[\w.-]{1,128}\s*(?:\[CALL_ID\]\s*[\w-]{0,64}\s*)?\[ARGS\]/y;

/**
 * The text with its reasoning blocks blanked out with spaces of the same length, so calls
 * drafted while thinking are not taken as calls and offsets still point into the original. A
 * block is `<think>...</think>`, `<thinking>`, `<reasoning>` or `<reflection>` (in any case, with
 * attributes or spaces in the tags; blocks of one name nest, see `reasoningBlockEnd`), gpt-oss's
 * analysis channel up to its `<|end|>`, or Mistral's `[THINK]...[/THINK]`. A closing tag no
 * opening tag before it matches ends a block that began with the text, as when the chat template
 * put the opening tag in the prompt; so does one an opening tag mentioned in that reasoning seems
 * to balance (see `mentionedOpenings`). A tag that lies inside a call's arguments (a marked call
 * not yet ended, a Qwen, GLM, DSML or MiniMax call's value, or JSON that may be a call: bare, OpenAI or
 * fenced) is quoted there and is text: blanking from or up to it would drop that call or expose
 * one quoted after it. Such calls are looked for with `budget`; when that is spent nothing more
 * is blanked. An opening tag never closed runs to the end. Linear in the text.
 */
export function maskReasoning(text: string, budget: WorkBudget): string {
  const calls = new CallExtents(text, budget);
  const blocks: [number, number][] = [];
  const leading = leadingBlock(text, calls);
  let from = leading?.[1] ?? 0;
  if (leading !== undefined) blocks.push(leading);
  for (let open = nextReasoningOpening(text, from); open !== undefined; ) {
    const quotedUntil = calls.enclosing(from, open.at);
    if (quotedUntil >= text.length) break;
    if (quotedUntil >= 0) {
      from = quotedUntil;
      open = nextReasoningOpening(text, Math.max(quotedUntil, open.at + 1));
      continue;
    }
    from = blockEnd(text, open, calls);
    blocks.push([open.at, from]);
    open = nextReasoningOpening(text, from);
  }
  return blankSpans(text, blocks.map(([start, end]) => ({ start, end })));
}

/**
 * Where the block `open` begins ends (see `reasoningBlockEnd`). A mention of the opening tag in
 * the reasoning ("remove the <think> block") pairs as a nested block with the reasoning's own
 * closing tag, and the block then runs on to a later one; when that one is quoted in a call
 * after the first (`s.split("</think>")` in code the model writes), the mention was no block and
 * the reasoning ends at its first closing tag.
 */
function blockEnd(text: string, open: ReasoningOpening, calls: CallExtents): number {
  const end = reasoningBlockEnd(text, open);
  const first = firstClosingEnd(text, open);
  return first !== undefined && first < end && calls.enclosing(first, end - 1) >= 0 ? first : end;
}

/**
 * The block opened in the prompt, if any (none when the text begins by opening one): from the
 * start to a closing tag with no opening tag before it, or else to the end of the block a
 * mention of an opening tag in prose seems to open (see `mentionedOpenings`), neither quoted in
 * a call. For a mention, the block starts at the mention's line instead when a call the model
 * closed ends before that line: such a call is the answer and the mention prose after it
 * (`<tool_call>...</tool_call>\nQwen puts <think> first and a\n</think>\nline after`; found in a
 * review), while a draft on the mention's line stays hidden.
 */
function leadingBlock(text: string, calls: CallExtents): [number, number] | undefined {
  // A text that opens its reasoning itself had none opened in the prompt: a closing tag with no
  // opening before it is then one quoted in that block (`[THINK]...splits on </think>...`) or
  // stray prose after it, and ending a block there would expose the one or hide the answer.
  if (nextReasoningOpening(text, 0)?.at === skipSpace(text, 0, text.length)) return undefined;
  for (const close of unopenedClosings(text)) {
    if (calls.enclosing(0, close.at) < 0) return [0, close.after];
  }
  for (const { open, close } of mentionedOpenings(text)) {
    if (calls.enclosing(0, open.at) >= 0 || calls.enclosing(0, close.at) >= 0) continue;
    const line = lineStart(text, open.at);
    return [calls.closedBefore(line) ? line : 0, close.after];
  }
  return undefined;
}

/** Where the line holding `at` begins. */
function lineStart(text: string, at: number): number {
  return Math.max(text.lastIndexOf('\n', at - 1), text.lastIndexOf('\r', at - 1)) + 1;
}

/** Finds the calls whose arguments may hold a position; see `enclosing`. */
class CallExtents {
  private markerFrom = -1;
  private marker: RegExpExecArray | null = null;
  /** The Qwen, GLM, DSML and MiniMax calls' spans, end by start; see `xmlCallEnd`. */
  private xmlCalls: Map<number, number> | undefined;

  constructor(
    private readonly text: string,
    private readonly budget: WorkBudget,
  ) {}

  /**
   * -1 when no call starting in `from..at` is read past `at`; else where the furthest one that
   * is ends (the text's length when the budget ran out before that was known).
   */
  enclosing(from: number, at: number): number {
    return Math.max(this.markedEnclosing(from, at), this.jsonEnclosing(from, at));
  }

  /**
   * Whether a call the model closed ends at or before `at`: a marked call whose JSON value or
   * closing tag was read (Mistral's `[TOOL_CALLS]name[ARGS]{...}` too), or JSON that may be a call,
   * read whole. False when the budget ran out first.
   */
  closedBefore(at: number): boolean {
    for (let marker = this.nextMarker(0); marker !== null && marker.index < at; marker = this.nextMarker(marker.index + 1)) {
      const end = this.closedMarkedEnd(marker.index, marker[0]);
      if (end !== undefined && end <= at) return true;
    }
    const { text } = this;
    for (let pos = 0; pos < at; ) {
      if (!mayStartCallJson(text, pos, text.length)) {
        pos++;
        continue;
      }
      const parsed = parseTolerantValue(text, pos, text.length, { budget: this.budget });
      if (parsed.ok && parsed.end <= at) return true;
      if (!parsed.ok && parsed.reason === 'budget') return false;
      // As in jsonEnclosing: a value read whole is skipped; after a failure, what it held may still be one.
      const reached = parsed.ok ? parsed.end : parsed.at;
      pos = parsed.ok || (parsed.reason === 'depth' && reached > pos) ? reached : pos + 1;
    }
    return false;
  }

  /** Where a marked call ends when it was closed: its JSON value read whole, or its closing tag found. */
  private closedMarkedEnd(markerAt: number, marker: string): number | undefined {
    const { text } = this;
    if (MARKER_ENDS[marker] !== undefined || INVOKE_MARKER.test(marker)) {
      const end = this.markedCallEnd(markerAt, marker);
      return end >= 0 && end < text.length ? end : undefined;
    }
    let valueAt = skipSpace(text, markerAt + marker.length, text.length);
    MISTRAL_NAME.lastIndex = valueAt;
    const named = marker === '[TOOL_CALLS]' ? MISTRAL_NAME.exec(text) : null;
    if (named !== null) valueAt = skipSpace(text, valueAt + named[0].length, text.length);
    const c = text.charCodeAt(valueAt);
    if (c !== 0x7b && c !== 0x5b) return undefined;
    const parsed = parseTolerantValue(text, valueAt, text.length, { budget: this.budget });
    return parsed.ok ? parsed.end : undefined;
  }

  private markedEnclosing(from: number, at: number): number {
    let pos = from;
    for (let marker = this.nextMarker(pos); marker !== null && marker.index < at; marker = this.nextMarker(pos)) {
      const reached = this.markedCallEnd(marker.index, marker[0]);
      if (reached > at) return reached;
      pos = Math.max(reached, marker.index + marker[0].length);
    }
    return -1;
  }

  /**
   * Where what follows a marker ends: its JSON value, or else its closing tag if it has one, or
   * the end of the Qwen, GLM, DSML or MiniMax call it opens (see `xmlCallEnd`); -1 when a tag is followed by
   * nothing its detector would read as a call (a mention in prose: "answer with a <tool_call>
   * tag"), which quotes nothing, however far its closing tag is.
   */
  private markedCallEnd(markerAt: number, marker: string): number {
    const { text } = this;
    if (INVOKE_MARKER.test(marker)) return this.xmlCallEnd(markerAt);
    let valueAt = markerAt + marker.length;
    if (marker === '<function=') {
      const nameEnd = text.indexOf('>', valueAt);
      if (nameEnd < 0) return text.length;
      valueAt = nameEnd + 1;
    }
    valueAt = skipSpace(text, valueAt, text.length);
    let reached = valueAt;
    const c = text.charCodeAt(valueAt);
    if (marker === '<tool_call>' && !mayStartCallJson(text, skipFillers(text, valueAt, text.length, true), text.length)) {
      return this.xmlCallEnd(markerAt);
    }
    if (marker === '<function=' && c !== 0x7b) return this.xmlCallEnd(markerAt);
    if (c === 0x7b || c === 0x5b) {
      const parsed = parseTolerantValue(text, valueAt, text.length, { budget: this.budget });
      if (parsed.ok) return parsed.end;
      if (parsed.reason === 'budget') return text.length;
      reached = parsed.at;
    }
    const end = MARKER_ENDS[marker];
    if (end === undefined) return reached;
    const endAt = text.indexOf(end, valueAt);
    return endAt < 0 ? text.length : Math.max(reached, endAt);
  }

  /**
   * The end of the Qwen, GLM, DSML or MiniMax call whose span begins at `markerAt`, or -1. Its values are raw
   * text, not JSON strings, so a reasoning tag in them (code being written) is found only this
   * way. The calls are looked for once, when first asked, in one pass each.
   */
  private xmlCallEnd(markerAt: number): number {
    if (this.xmlCalls === undefined) {
      this.xmlCalls = new Map();
      for (const { start, end } of [...qwenCallSpans(this.text), ...glmCallSpans(this.text), ...dsmlCallSpans(this.text), ...miniMaxCallSpans(this.text)]) {
        this.xmlCalls.set(start, end);
      }
    }
    return this.xmlCalls.get(markerAt) ?? -1;
  }

  /** The first marker at or after `from`, remembering the last search (`from` mostly grows). */
  private nextMarker(from: number): RegExpExecArray | null {
    const known = this.markerFrom >= 0 && this.markerFrom <= from;
    if (known && (this.marker === null || this.marker.index >= from)) return this.marker;
    CALL_MARKERS.lastIndex = from;
    this.markerFrom = from;
    this.marker = CALL_MARKERS.exec(this.text);
    return this.marker;
  }

  private jsonEnclosing(from: number, at: number): number {
    const { text } = this;
    let pos = from;
    while (pos < at) {
      const c = text.charCodeAt(pos);
      if ((c !== 0x7b && c !== 0x5b) || !mayStartCallJson(text, pos, text.length)) {
        pos++;
        continue;
      }
      const parsed = parseTolerantValue(text, pos, text.length, { budget: this.budget });
      if (!parsed.ok && parsed.reason === 'budget') return text.length;
      const reached = parsed.ok ? parsed.end : parsed.at;
      if (reached > at) return reached;
      // A value read whole is skipped; after a failure, what it held may still be a value.
      pos = parsed.ok || (parsed.reason === 'depth' && parsed.at > pos) ? reached : pos + 1;
    }
    return -1;
  }
}
