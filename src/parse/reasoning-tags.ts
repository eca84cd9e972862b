/** Tags models wrap their reasoning in, in the order a closing tag with no opening tag is looked for. */
const NAMES = ['think', 'thinking', 'reasoning', 'reflection'] as const;
/**
 * Spaces or attributes (`name="value"`) a reasoning tag may have before its `>`, at most 8 of
 * 200 characters each, so searching for tags stays linear; words are not attributes (`<think
 * about it>` in prose is no tag: found in a review).
 */
const ATTRIBUTES = `(?:\\s+[A-Za-z_:][-\\w:.]{0,64}\\s*=\\s*(?:"[^"<>]{0,200}"|'[^'<>]{0,200}'|[^\\s"'<>=]{1,200})){0,8}\\s*`;
/** Names whose closing tag with no opening tag ends a block the chat template opened in the prompt (DeepSeek-R1's `<think>`). */
const PROMPT_OPENED = new Set<string>(['think', 'thinking']);
const ANALYSIS = 'analysis';

/**
 * An opening reasoning tag, in any case, with spaces or attributes (`<think>`, `<THINK >`,
 * `<reasoning type="plan">`), or the header of gpt-oss's analysis channel
 * (`<|channel|>analysis<|message|>`, as its chat format writes it).
 */
const OPENING = new RegExp(`<(thinking|think|reasoning|reflection)${ATTRIBUTES}>|<\\|channel\\|>${ANALYSIS}<\\|message\\|>`, 'gi');
const OPENING_BY_NAME = new Map(NAMES.map((name) => [name, new RegExp(`<${name}${ATTRIBUTES}>`, 'gi')]));
const CLOSING_BY_NAME = new Map<string, RegExp>(NAMES.map((name) => [name, new RegExp(`</${name}\\s*>`, 'gi')]));
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

/** Just after the end of a block (past its closing tag), or the text's length when it never ends. */
export function reasoningBlockEnd(text: string, open: ReasoningOpening): number {
  const closing = CLOSING_BY_NAME.get(open.name) ?? ANALYSIS_END;
  closing.lastIndex = open.after;
  const close = closing.exec(text);
  if (close === null) return text.length;
  return close[0] === '<|start|>' || close[0] === '<|channel|>' ? close.index : close.index + close[0].length;
}

/**
 * For each tag name in turn, its first closing tag when no opening tag of that name comes before
 * it: such a tag ends a block opened in the prompt.
 */
export function unopenedClosings(text: string): TagSpan[] {
  const found: TagSpan[] = [];
  for (const [name, opening] of OPENING_BY_NAME) {
    if (!PROMPT_OPENED.has(name)) continue;
    const closing = CLOSING_BY_NAME.get(name);
    if (closing === undefined) continue;
    closing.lastIndex = 0;
    const close = closing.exec(text);
    if (close === null) continue;
    opening.lastIndex = 0;
    const open = opening.exec(text);
    if (inCode(text, close.index, close.index + close[0].length)) continue;
    if (open === null || open.index > close.index) found.push({ at: close.index, after: close.index + close[0].length });
  }
  return found;
}
