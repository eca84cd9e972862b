import { mayStartCallJson } from './call-precheck';
import { skipSpace } from './marker-finder';
import { mentionedOpenings, nextReasoningOpening, reasoningBlockEnd, unopenedClosings } from './reasoning-tags';
import { parseTolerantValue, type WorkBudget } from './tolerant-json';

/** Call markers, and the tag that ends what follows a marker when it is not one JSON value. */
const CALL_MARKERS = /<tool_call>|\[TOOL_CALLS\]|<\|python_tag\|>|<function=/g;
const MARKER_ENDS: Readonly<Record<string, string>> = { '<tool_call>': '</tool_call>', '<function=': '</function>' };

/**
 * The text with its reasoning blocks blanked out with spaces of the same length, so calls
 * drafted while thinking are not taken as calls and offsets still point into the original. A
 * block is `<think>...</think>`, `<thinking>`, `<reasoning>` or `<reflection>` (in any case, with
 * attributes or spaces in the tags; blocks of one name nest, see `reasoningBlockEnd`), or
 * gpt-oss's analysis channel up to its `<|end|>`. A closing tag no opening tag before it matches
 * ends a block that began with the text, as when the chat template put the opening tag in the
 * prompt; so does one an opening tag mentioned in that reasoning seems to balance (see
 * `mentionedOpenings`). A tag that lies inside a call's arguments (a marked call not yet ended, or JSON that
 * may be a call: bare, OpenAI or fenced) is quoted there and is text: blanking from or up to it
 * would drop that call or expose one quoted after it. Such calls
 * are looked for with `budget`; when that is spent nothing more is blanked. An opening tag never
 * closed runs to the end. Linear in the text.
 */
export function maskReasoning(text: string, budget: WorkBudget): string {
  const calls = new CallExtents(text, budget);
  const blocks: [number, number][] = [];
  let from = leadingBlockEnd(text, calls);
  if (from > 0) blocks.push([0, from]);
  for (let open = nextReasoningOpening(text, from); open !== undefined; ) {
    const quotedUntil = calls.enclosing(from, open.at);
    if (quotedUntil >= text.length) break;
    if (quotedUntil >= 0) {
      from = quotedUntil;
      open = nextReasoningOpening(text, Math.max(quotedUntil, open.at + 1));
      continue;
    }
    from = reasoningBlockEnd(text, open);
    blocks.push([open.at, from]);
    open = nextReasoningOpening(text, from);
  }
  return blank(text, blocks);
}

/**
 * The end of a block opened in the prompt, or 0: a closing tag with no opening tag before it, or
 * else the end of the block a mention of an opening tag in prose seems to open (see
 * `mentionedOpenings`), neither quoted in a call.
 */
function leadingBlockEnd(text: string, calls: CallExtents): number {
  for (const close of unopenedClosings(text)) {
    if (calls.enclosing(0, close.at) < 0) return close.after;
  }
  for (const { open, close } of mentionedOpenings(text)) {
    if (calls.enclosing(0, open.at) < 0 && calls.enclosing(0, close.at) < 0) return close.after;
  }
  return 0;
}

/** Finds the calls whose arguments may hold a position; see `enclosing`. */
class CallExtents {
  private markerFrom = -1;
  private marker: RegExpExecArray | null = null;

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

  private markedEnclosing(from: number, at: number): number {
    let pos = from;
    for (let marker = this.nextMarker(pos); marker !== null && marker.index < at; marker = this.nextMarker(pos)) {
      const reached = this.markedCallEnd(marker.index, marker[0]);
      if (reached > at) return reached;
      pos = Math.max(reached, marker.index + marker[0].length);
    }
    return -1;
  }

  /** Where what follows a marker ends: its JSON value, or else its closing tag if it has one. */
  private markedCallEnd(markerAt: number, marker: string): number {
    const { text } = this;
    let valueAt = markerAt + marker.length;
    if (marker === '<function=') {
      const nameEnd = text.indexOf('>', valueAt);
      if (nameEnd < 0) return text.length;
      valueAt = nameEnd + 1;
    }
    valueAt = skipSpace(text, valueAt, text.length);
    let reached = valueAt;
    const c = text.charCodeAt(valueAt);
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

function blank(text: string, blocks: readonly [number, number][]): string {
  let out = '';
  let pos = 0;
  for (const [start, end] of blocks) {
    out += text.slice(pos, start) + ' '.repeat(end - start);
    pos = end;
  }
  return out + text.slice(pos);
}
