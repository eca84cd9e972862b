import type { MemoPeek } from './guards';
import type { ToolOutput } from './middleware';

/**
 * The memo entry a read found when it skipped its slot and rate turn, and what the entry read as
 * of then: its resource's write generation and the count of session ends.
 */
export interface MemoHit {
  readonly output: ToolOutput;
  readonly resource?: string;
  readonly generation: number;
  readonly sessionEnds: number;
}

/** The memo cache's entry for `localKey` now, with what it read (a Map lookup or two more on a hit). */
export function peekMemo(memo: MemoPeek, localKey: string): MemoHit | undefined {
  const output = memo.peek(localKey);
  if (output === undefined) return undefined;
  const { resource } = output;
  return { output, resource, generation: resource === undefined ? 0 : memo.generation(resource), sessionEnds: memo.sessionEnds() };
}

/**
 * Whether a peeked entry may still be served: no write of its resource and no session end since
 * the peek (it may have gone by its TTL or as the least recently used, which makes it no staler).
 */
export function memoStillServes(memo: MemoPeek, hit: MemoHit): boolean {
  return memo.sessionEnds() === hit.sessionEnds && (hit.resource === undefined || memo.generation(hit.resource) === hit.generation);
}

/** Whether memoize will serve a read that peeked `hit`: its entry is still there, or still serves. */
export function memoServes(memo: MemoPeek, localKey: string, hit: MemoHit): boolean {
  return memo.peek(localKey) !== undefined || memoStillServes(memo, hit);
}
