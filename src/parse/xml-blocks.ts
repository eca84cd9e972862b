import type { CandidateCall } from './call-shapes';
import type { FoundCalls } from './found-calls';
import type { MarkerFinder } from './marker-finder';

/** How a block after its opening tag ended: a call (or a name that is none) up to `end`, or broken at `at`. */
export type Block =
  | { readonly kind: 'call'; readonly call: CandidateCall | undefined; readonly end: number }
  | { readonly kind: 'broken'; readonly at: number };

/**
 * The calls of the XML-like blocks (Qwen3-Coder's, GLM's, DSML's) each opened by a tag `opens` finds:
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
 * Where the value from a position ends: its closing tag's position (or, the model having left that
 * out, where the value stops), or -1 when no end is this call's. Built per text (`createTagValueEnds`),
 * its `from` must not decrease.
 */
export type ValueEnds = (from: number) => number;

/**
 * The reading of blocks a value may quote (a call quoted whole in a file being written): `end`
 * reads the block whose tag is at `open` for a value's `quotedCallEnd` (its end when it is a whole
 * call, else -1), and `read` gives that reading back when the scan comes to the block (the value
 * holding it broke after all), reading others afresh, so no block is read twice and the value
 * ends' positions never go back. A block quoted is read one level deep: a call it quotes in turn
 * breaks its value (as before), so nesting costs no stack.
 */
export function quotedBlocks(read: (open: number) => Block): { readonly read: (open: number) => Block; readonly end: (open: number) => number } {
  const ahead = new Map<number, Block>();
  let inQuoted = false;
  return {
    read(open) {
      const block = ahead.get(open);
      if (block === undefined) return read(open);
      ahead.delete(open);
      return block;
    },
    end(open) {
      if (inQuoted) return -1;
      inQuoted = true;
      let block: Block;
      try {
        block = read(open);
      } finally {
        inQuoted = false;
      }
      ahead.set(open, block);
      return block.kind === 'call' ? block.end : -1;
    },
  };
}
