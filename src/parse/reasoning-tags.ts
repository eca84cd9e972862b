/** Tags models wrap their reasoning in. */
const NAMES = ['think', 'thinking', 'reasoning', 'reflection'] as const;
/**
 * Spaces or attributes (`name="value"`) a reasoning tag may have before its `>`, at most 8 of
 * 200 characters each, so searching for tags stays linear; words are not attributes (`<think
 * about it>` in prose is no tag: found in a review).
 */
const ATTRIBUTES = `(?:\\s+[A-Za-z_:][-\\w:.]{0,64}\\s*=\\s*(?:"[^"<>]{0,200}"|'[^'<>]{0,200}'|[^\\s"'<>=]{1,200})){0,8}\\s*`;
/**
 * Names whose closing tag with no opening tag ends a block the chat template opened in the prompt
 * (DeepSeek-R1's `<think>`), in the order such a tag is looked for.
 */
const PROMPT_OPENED = new Set<string>(['think', 'thinking']);
const ANALYSIS = 'analysis';
/**
 * The special tokens Mistral's reasoning models (Magistral, Ministral reasoning) put around their
 * reasoning, beside `[TOOL_CALLS]`: exact, upper case, no attributes, never nested.
 */
const MISTRAL_THINK = '[THINK]';
const MISTRAL_THINK_END = '[/THINK]';
/**
 * Gemma 4's thinking channel (`<|channel>thought\n...<channel|>`): exact, never nested, ending at
 * its first `<channel|>` (as vLLM's `gemma4` reasoning parser reads a whole output), so a call
 * drafted in it is no call even when its closing token is missing.
 */
const GEMMA_CHANNEL = '<|channel>';
const GEMMA_CHANNEL_END = '<channel|>';
/** Cohere Command A's reasoning, before its action block: exact, never nested, to its first closing token. */
const COHERE_THINKING = '<|START_THINKING|>';
/** The closing token of each opening taken only as written. */
const EXACT_ENDS: Readonly<Record<string, string>> = { [MISTRAL_THINK]: MISTRAL_THINK_END, [GEMMA_CHANNEL]: GEMMA_CHANNEL_END, [COHERE_THINKING]: '<|END_THINKING|>' };
/** The openings taken only as written: special tokens, where another case is prose (`[think]`). */
const EXACT_TOKENS = Object.keys(EXACT_ENDS);

/**
 * An opening reasoning tag, in any case, with spaces or attributes (`<think>`, `<THINK >`,
 * `<reasoning type="plan">`), the header of gpt-oss's analysis channel
 * (`<|channel|>analysis<|message|>`, as its chat format writes it), Mistral's `[THINK]`, Gemma
 * 4's `<|channel>` or Cohere's `<|START_THINKING|>` (in any case here; `nextReasoningOpening` takes
 * them only as written).
 */
const OPENING = new RegExp(`<(thinking|think|reasoning|reflection)${ATTRIBUTES}>|<\\|(?:channel(?:\\|>${ANALYSIS}<\\|message\\|>|>)|START_THINKING\\|>)|\\[THINK\\]`, 'gi');
/** A name's opening and closing tags, in one search: a block of that name nests inside another. */
const TAGS_BY_NAME = new Map<string, RegExp>(NAMES.map((name) => [name, new RegExp(`<${name}${ATTRIBUTES}>|</${name}\\s*>`, 'gi')]));
/**
 * What ends an analysis message: its `<|end|>` (or `<|call|>`, `<|return|>`), or, that missing,
 * the next message's `<|start|>` or `<|channel|>`, which stay outside the block.
 */
const ANALYSIS_END = /<\|(?:end|call|return)\|>|<\|start\|>|<\|channel\|>/g;

/** Where a reasoning block opens and its opening ends, and its tag's name (lower case), `analysis`, `[THINK]` or `<|channel>`. */
export interface ReasoningOpening {
  readonly at: number;
  readonly after: number;
  readonly name: string;
}

/** A span of the text: where it begins and just after it ends. */
export interface TagSpan {
  readonly at: number;
  readonly after: number;
}

/** The first reasoning block opened at or after `from`. */
export function nextReasoningOpening(text: string, from: number): ReasoningOpening | undefined {
  OPENING.lastIndex = from;
  for (let open = OPENING.exec(text); open !== null; open = OPENING.exec(text)) {
    const after = open.index + open[0].length;
    // A tag in inline code (`<reasoning>`) is prose about tags, not one. Mistral's token is only
    // ever upper case: a `[think]` is prose ("Step [think]: ..."), and would hide the rest.
    const token = EXACT_TOKENS.find((exact) => exact.toLowerCase() === open[0].toLowerCase());
    if (inCode(text, open.index, after) || (token !== undefined && token !== open[0])) continue;
    return { at: open.index, after, name: open[1]?.toLowerCase() ?? token ?? ANALYSIS };
  }
  return undefined;
}

/** Whether text[at, after) stands between backticks. */
const inCode = (text: string, at: number, after: number) => text[at - 1] === '`' && text[after] === '`';

/**
 * Just after the end of a block (past its closing tag), or the text's length when it never ends.
 * Blocks of the same name nest (`<think>a <think>b</think> c </think>` is one block): the block
 * ends at the closing tag that balances its opening, counting those of that name in between. When
 * none balances it (an opening tag mentioned in prose, in quotes, in an unclosed code span), it
 * ends at its first closing tag, so a mention never hides the call after `</think>`. A closing
 * tag mentioned in a sentence does not end it when one nothing opens follows on a line of its
 * own. Mistral's `[THINK]` ends at its first `[/THINK]`, Gemma 4's `<|channel>` at its first
 * `<channel|>`, Cohere's `<|START_THINKING|>` at its first `<|END_THINKING|>`.
 */
export function reasoningBlockEnd(text: string, open: ReasoningOpening): number {
  const exactEnd = EXACT_ENDS[open.name];
  if (exactEnd !== undefined) {
    const close = text.indexOf(exactEnd, open.after);
    return close < 0 ? text.length : close + exactEnd.length;
  }
  const tags = TAGS_BY_NAME.get(open.name);
  if (tags === undefined) {
    ANALYSIS_END.lastIndex = open.after;
    const close = ANALYSIS_END.exec(text);
    if (close === null) return text.length;
    return close[0] === '<|start|>' || close[0] === '<|channel|>' ? close.index : close.index + close[0].length;
  }
  const pairs = tagPairs(text, open.name, tags);
  const close = closingOf(pairs, open);
  // A closing tag mentioned in a sentence of the reasoning ("splits on </think> and keeps the
  // rest") balanced the opening tag, and the reasoning went on to one that nothing opens, on a
  // line of its own as chat templates write it: that one ends the block.
  const later = pairs.unopened;
  if (close !== undefined && later !== undefined && later.at > close.at && inSentence(text, close) && !afterTextOnItsLine(text, later.at)) {
    return later.after;
  }
  return close?.after ?? text.length;
}

/**
 * Just after the first closing tag of the block `open` begins (its end had no tag inside it been
 * counted as nested), or undefined when it has none or is not a block of a tag's name.
 */
export function firstClosingEnd(text: string, open: ReasoningOpening): number | undefined {
  const tags = TAGS_BY_NAME.get(open.name);
  return tags === undefined ? undefined : firstClosingAfter(tagPairs(text, open.name, tags), open.after)?.after;
}

/** The closing tag that ends the block `open` begins: the one balancing it, else its first. */
function closingOf(pairs: TagPairs, open: TagSpan): TagSpan | undefined {
  return pairs.ends.get(open.at) ?? firstClosingAfter(pairs, open.after);
}

/**
 * For each name a block may be opened with in the prompt, its first closing tag that no opening
 * tag of that name before it balances (counting nested pairs, as `reasoningBlockEnd` does): such
 * a tag ends a block opened in the prompt. One mentioned in a sentence (words before and after it
 * on its line: "end reasoning with </think> and then answer") is passed over for a later one that
 * is not: the reasoning goes on to that one, where the template ends it.
 */
export function unopenedClosings(text: string): TagSpan[] {
  const found: TagSpan[] = [];
  for (const name of PROMPT_OPENED) {
    const tags = TAGS_BY_NAME.get(name);
    if (tags === undefined) continue;
    const unopened = tagPairs(text, name, tags).unopened;
    if (unopened !== undefined) found.push(unopened);
  }
  return found;
}

/**
 * For each name a block may be opened with in the prompt, when no closing tag of that name is
 * unopened (see `unopenedClosings`) but the first opening tag of that name is a mention in prose
 * (text before it on its line, as in "I must not wrap calls in <think> tags") and the closing tag
 * that ends its block begins a later line: that opening tag and that closing tag. In reasoning
 * opened in the prompt a mention pairs with the `</think>` that ends the reasoning (on a line of
 * its own, as chat templates write it), which then looks opened in the text; the text before the
 * mention is reasoning too. A block the model opens itself starts the text or a line, and a pair
 * on one line (`use <think>...</think> tags`) is prose or a block of its own.
 */
export function mentionedOpenings(text: string): { readonly open: TagSpan; readonly close: TagSpan }[] {
  const found: { open: TagSpan; close: TagSpan }[] = [];
  for (const name of PROMPT_OPENED) {
    const tags = TAGS_BY_NAME.get(name);
    if (tags === undefined) continue;
    const pairs = tagPairs(text, name, tags);
    const open = pairs.firstOpening;
    if (pairs.unopened !== undefined || open === undefined || !afterTextOnItsLine(text, open.at)) continue;
    const close = closingOf(pairs, open);
    if (close !== undefined && !afterTextOnItsLine(text, close.at) && text.slice(open.after, close.at).includes('\n')) found.push({ open, close });
  }
  return found;
}

/** Whether a character other than whitespace stands before `at` on its line. */
function afterTextOnItsLine(text: string, at: number): boolean {
  for (let pos = at - 1; pos >= 0; pos--) {
    const c = text.charCodeAt(pos);
    if (c === 0x0a || c === 0x0d) return false;
    if (c !== 0x20 && c !== 0x09) return true;
  }
  return false;
}

/** Whether a tag stands in a sentence: text before and after it on its line. */
const inSentence = (text: string, tag: TagSpan): boolean => afterTextOnItsLine(text, tag.at) && textAfterOnItsLine(text, tag.after);

/** Whether a character other than whitespace stands at or after `from` on its line. */
function textAfterOnItsLine(text: string, from: number): boolean {
  for (let pos = from; pos < text.length; pos++) {
    const c = text.charCodeAt(pos);
    if (c === 0x0a || c === 0x0d) return false;
    if (c !== 0x20 && c !== 0x09) return true;
  }
  return false;
}

/** A text's tags of one name, paired as brackets. */
interface TagPairs {
  /** The closing tag that balances each opening tag, by where the opening begins. */
  readonly ends: Map<number, TagSpan>;
  /** The first opening tag outside code. */
  readonly firstOpening: TagSpan | undefined;
  /** Closing tags outside code, then all closing tags, each in order. */
  readonly plainClosings: TagSpan[];
  readonly allClosings: TagSpan[];
  /**
   * The first closing tag with no opening tag before it left to balance, and not mentioned in a
   * sentence; else the first such tag mentioned in one.
   */
  readonly unopened: TagSpan | undefined;
}

let pairsText: string | undefined;
const pairsByName = new Map<string, TagPairs>();

/**
 * Pairs the text's tags of `name` in one pass (so masking stays linear however many blocks there
 * are), remembering the last text. Tags in inline code or in a fenced code block are prose about
 * tags and pair with nothing.
 */
function tagPairs(text: string, name: string, tags: RegExp): TagPairs {
  if (pairsText !== text) {
    pairsText = text;
    pairsByName.clear();
  }
  const known = pairsByName.get(name);
  if (known !== undefined) return known;
  const fences = fencedRanges(text);
  const ends = new Map<number, TagSpan>();
  let firstOpening: TagSpan | undefined;
  const plainClosings: TagSpan[] = [];
  const allClosings: TagSpan[] = [];
  const stack: number[] = [];
  let unopened: TagSpan | undefined;
  let mentioned: TagSpan | undefined;
  let fence = 0;
  tags.lastIndex = 0;
  for (let tag = tags.exec(text); tag !== null; tag = tags.exec(text)) {
    const at = tag.index;
    const after = at + tag[0].length;
    const closing = tag[0].charCodeAt(1) === 0x2f;
    if (closing) allClosings.push({ at, after });
    while (fence < fences.length && (fences[fence]?.[1] ?? 0) <= at) fence++;
    const fenced = fence < fences.length && (fences[fence]?.[0] ?? Infinity) <= at;
    if (fenced || inCode(text, at, after)) continue;
    if (!closing) {
      stack.push(at);
      firstOpening ??= { at, after };
      continue;
    }
    plainClosings.push({ at, after });
    const opening = stack.pop();
    if (opening !== undefined) ends.set(opening, { at, after });
    else if (unopened === undefined && inSentence(text, { at, after })) mentioned ??= { at, after };
    else unopened ??= { at, after };
  }
  const pairs = { ends, firstOpening, plainClosings, allClosings, unopened: unopened ?? mentioned };
  pairsByName.set(name, pairs);
  return pairs;
}

/** The first closing tag at or after `from`: outside code if there is one, else any. */
function firstClosingAfter(pairs: TagPairs, from: number): TagSpan | undefined {
  return firstAt(pairs.plainClosings, from) ?? firstAt(pairs.allClosings, from);
}

function firstAt(spans: readonly TagSpan[], from: number): TagSpan | undefined {
  let low = 0;
  let high = spans.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((spans[mid]?.at ?? Infinity) < from) low = mid + 1;
    else high = mid;
  }
  return spans[low];
}

const FENCE_LINE = /^ {0,3}(`{3,}|~{3,})(.*)$/gm;

/** Where fenced code blocks (```` ``` ```` or `~~~` lines, closed) begin and end, in order. */
function fencedRanges(text: string): [number, number][] {
  const ranges: [number, number][] = [];
  let open: { at: number; run: string } | undefined;
  FENCE_LINE.lastIndex = 0;
  for (let line = FENCE_LINE.exec(text); line !== null; line = FENCE_LINE.exec(text)) {
    const run = line[1] ?? '';
    const rest = line[2] ?? '';
    if (open === undefined) {
      if (!(run.startsWith('`') && rest.includes('`'))) open = { at: line.index, run };
    } else if (run[0] === open.run[0] && run.length >= open.run.length && rest.trim() === '') {
      ranges.push([open.at, line.index + line[0].length]);
      open = undefined;
    }
  }
  return ranges;
}
