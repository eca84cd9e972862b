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
 * An opening reasoning tag, in any case, with spaces or attributes (`<think>`, `<THINK >`,
 * `<reasoning type="plan">`), or the header of gpt-oss's analysis channel
 * (`<|channel|>analysis<|message|>`, as its chat format writes it).
 */
const OPENING = new RegExp(`<(thinking|think|reasoning|reflection)${ATTRIBUTES}>|<\\|channel\\|>${ANALYSIS}<\\|message\\|>`, 'gi');
/** A name's opening and closing tags, in one search: a block of that name nests inside another. */
const TAGS_BY_NAME = new Map<string, RegExp>(NAMES.map((name) => [name, new RegExp(`<${name}${ATTRIBUTES}>|</${name}\\s*>`, 'gi')]));
/**
 * Blocks of one name nested deeper than this are not counted out: the outermost then runs to the
 * end of the text, so tags stacked in hostile input can only hide more, never less.
 */
export const MAX_REASONING_DEPTH = 16;
/**
 * What ends an analysis message: its `<|end|>` (or `<|call|>`, `<|return|>`), or, that missing,
 * the next message's `<|start|>` or `<|channel|>`, which stay outside the block.
 */
const ANALYSIS_END = /<\|(?:end|call|return)\|>|<\|start\|>|<\|channel\|>/g;

/** Where a reasoning block opens and its opening ends, and its tag's name (lower case) or `analysis`. */
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
    // A tag in inline code (`<reasoning>`) is prose about tags, not one.
    if (!inCode(text, open.index, after)) return { at: open.index, after, name: open[1]?.toLowerCase() ?? ANALYSIS };
  }
  return undefined;
}

/** Whether text[at, after) stands between backticks. */
const inCode = (text: string, at: number, after: number) => text[at - 1] === '`' && text[after] === '`';

/**
 * Just after the end of a block (past its closing tag), or the text's length when it never ends.
 * Blocks of the same name nest (`<think>a <think>b</think> c </think>` is one block): the block
 * ends at the closing tag that matches its opening, counting those of that name in between, up
 * to `MAX_REASONING_DEPTH`.
 */
export function reasoningBlockEnd(text: string, open: ReasoningOpening): number {
  const tags = TAGS_BY_NAME.get(open.name);
  if (tags === undefined) {
    ANALYSIS_END.lastIndex = open.after;
    const close = ANALYSIS_END.exec(text);
    if (close === null) return text.length;
    return close[0] === '<|start|>' || close[0] === '<|channel|>' ? close.index : close.index + close[0].length;
  }
  tags.lastIndex = open.after;
  const closing = matchingClosing(text, tags, 1);
  return closing === undefined ? text.length : closing.after;
}

/**
 * For each name a block may be opened with in the prompt, its first closing tag that no opening
 * tag of that name before it matches (counting nested pairs, as `reasoningBlockEnd` does): such
 * a tag ends a block opened in the prompt.
 */
export function unopenedClosings(text: string): TagSpan[] {
  const found: TagSpan[] = [];
  for (const name of PROMPT_OPENED) {
    const tags = TAGS_BY_NAME.get(name);
    if (tags === undefined) continue;
    tags.lastIndex = 0;
    const closing = matchingClosing(text, tags, 0);
    if (closing !== undefined) found.push(closing);
  }
  return found;
}

/**
 * Searching with `tags` from its `lastIndex`, inside `depth` open blocks of its name, the closing
 * tag that leaves none open (for a depth of 0, the first closing tag not matched by an opening
 * one); undefined when there is none or the blocks nest deeper than `MAX_REASONING_DEPTH`. A tag
 * in inline code is prose about tags, not one.
 */
function matchingClosing(text: string, tags: RegExp, depth: number): TagSpan | undefined {
  let open = depth;
  for (let tag = tags.exec(text); tag !== null; tag = tags.exec(text)) {
    const at = tag.index;
    const after = at + tag[0].length;
    if (inCode(text, at, after)) continue;
    if (tag[0].charCodeAt(1) !== 0x2f) {
      if (++open > MAX_REASONING_DEPTH) return undefined;
    } else if (--open < depth) {
      return { at, after };
    }
  }
  return undefined;
}
