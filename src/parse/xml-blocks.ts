import type { CandidateCall } from './call-shapes';
import type { FoundCalls } from './found-calls';
import type { MarkerFinder } from './marker-finder';
import { createTokenFinder, type Spellings } from './special-tokens';

/** How a block after its opening tag ended: a call (or a name that is none) up to `end`, or broken at `at`. */
export type Block =
  | { readonly kind: 'call'; readonly call: CandidateCall | undefined; readonly end: number }
  | { readonly kind: 'broken'; readonly at: number };

/**
 * The calls of the XML-like blocks (Qwen3-Coder's, GLM's) each opened by a tag `opens` finds:
 * `read` reads the block whose tag is at `open`, and `span` makes the found call of one that is a
 * call. The search goes on where a broken block broke, and after a whole one, so each character
 * is read a bounded number of times.
 */
export function* scanBlocks(opens: MarkerFinder, read: (open: number) => Block, span: (open: number, call: CandidateCall, end: number) => FoundCalls): Generator<FoundCalls> {
  for (let open = opens.next(0); open >= 0; ) {
    const block = read(open);
    if (block.kind === 'broken') {
      open = opens.next(block.at);
      continue;
    }
    if (block.call !== undefined) yield span(open, block.call, block.end);
    open = opens.next(block.end);
  }
}

/**
 * A dialect's tags around a value: its closing tag (`</parameter>`), the tag of the next key
 * (`<parameter=`), and the call's closing and opening tags (`</function>`, `<function=`), each
 * in one spelling or several (DeepSeek's DSML tags with fullwidth or ASCII bars).
 */
export interface ValueTags {
  readonly close: string | Spellings;
  readonly nextKey: string | Spellings;
  readonly callClose: string | Spellings;
  readonly callOpen: string | Spellings;
}

/** Where the value from a position ends; see `createValueEnds`. */
export type ValueEnds = (from: number) => number;

/**
 * Where the value from a position ends: its closing tag, unless the next key's tag comes first
 * or there is none; then the model left it out, and the value ends at the next key's tag or the
 * call's closing tag, as vLLM's `qwen3_coder` parser ends it, unless a call's opening tag comes
 * first (that tag is another call's: prose explaining the format, or a draft cut off, must not
 * swallow the call after it). -1 when there is no end of this call's (the text was cut off in
 * the value, or is prose). Its own finders (apart from the scan's), so `from` must not decrease.
 */
export function createValueEnds(text: string, tags: ValueTags): ValueEnds {
  const finder = (tag: string | Spellings): MarkerFinder => createTokenFinder(text, typeof tag === 'string' ? [tag] : tag);
  const closes = finder(tags.close);
  const nextKeys = finder(tags.nextKey);
  const callCloses = finder(tags.callClose);
  const opens = finder(tags.callOpen);
  return (from) => {
    const close = closes.next(from);
    const nextKey = nextKeys.next(from);
    if (close >= 0 && (nextKey < 0 || close < nextKey)) return close;
    const end = firstFound(nextKey, callCloses.next(from));
    const open = opens.next(from);
    return open >= 0 && open < end ? -1 : end;
  };
}

/** The smaller of two positions that are not -1, or -1. */
const firstFound = (a: number, b: number): number => (a < 0 ? b : b < 0 || a < b ? a : b);
