import type { MemoPeek } from './guards';
import type { ToolOutput } from './middleware';

/**
 * The memo entry a read found when it skipped its slot and rate turn, and what the entry read as
 * of then: its resource's write generation and the count of its tenant's session ends (of all
 * sessions' without a tenant).
 */
export interface MemoHit {
  readonly output: ToolOutput;
  readonly resource?: string;
  readonly tenant?: string;
  readonly generation: number;
  readonly sessionEnds: number;
}

/** The memo cache's entry for `localKey` now, with what it read (a Map lookup or two more on a hit). */
export function peekMemo(memo: MemoPeek, localKey: string): MemoHit | undefined {
  const output = memo.peek(localKey);
  if (output === undefined) return undefined;
  const { resource, tenant } = output;
  return { output, resource, tenant, generation: resource === undefined ? 0 : memo.generation(resource), sessionEnds: memo.sessionEnds(tenant) };
}

/**
 * Whether a peeked entry may still be served: no write of its resource and no end of a session of
 * its tenant since the peek (it may have gone by its TTL or as the least recently used, which
 * makes it no staler; another tenant's session ends are not its own).
 */
export function memoStillServes(memo: MemoPeek, hit: MemoHit): boolean {
  return memo.sessionEnds(hit.tenant) === hit.sessionEnds && (hit.resource === undefined || memo.generation(hit.resource) === hit.generation);
}

/** Whether memoize will serve a read that peeked `hit`: its entry is still there, or still serves. */
export function memoServes(memo: MemoPeek, localKey: string, hit: MemoHit): boolean {
  return memo.peek(localKey) !== undefined || memoStillServes(memo, hit);
}
