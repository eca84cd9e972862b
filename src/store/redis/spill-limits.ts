import type { FinishAttempt } from '../store';
import { checkInteger } from '../../options';
import { fullTextNotKeptWarning, indexChunks } from '../spilled-text';

/** Bounds on the whole texts of bounded results (spills) the Redis store keeps for ReadResult. */
export interface SpillLimits {
  /**
   * Share of the Redis node's `maxmemory` that spills may fill: a spill that would take the node's
   * `used_memory` past it is refused (checked inside the finish step's script, on the node that
   * owns the session's slot), so spills never take the room that idempotency claims and records
   * need under `noeviction`. No check on a node without `maxmemory`. @default 0.5
   */
  readonly spillMemoryShare?: number;
  /** Largest spill kept, in UTF-8 bytes; a longer text is refused before it is sent. @default 8 MiB (8388608) */
  readonly maxSpillBytes?: number;
  /**
   * Longest a spill is kept, in seconds, whatever its tool's `ttl_seconds` (which its idempotency
   * record keeps); 0: as long as that TTL, as DESIGN section 11 has a handle live. A spill is read
   * soon after its call: a cap leaves more room for new spills. @default 0
   */
  readonly maxSpillTtlSeconds?: number;
}

export type ResolvedSpillLimits = Required<SpillLimits>;

export const DEFAULT_SPILL_LIMITS: ResolvedSpillLimits = Object.freeze({ spillMemoryShare: 0.5, maxSpillBytes: 8 * 1024 * 1024, maxSpillTtlSeconds: 0 });

/** Fills unset spill limits with their defaults; rejects bad values. */
export function resolveSpillLimits(partial: SpillLimits = {}): ResolvedSpillLimits {
  const limits = { ...DEFAULT_SPILL_LIMITS };
  const share = partial.spillMemoryShare ?? limits.spillMemoryShare;
  if (typeof share !== 'number' || !(share > 0 && share <= 1)) throw new RangeError(`spillMemoryShare must be a number above 0 and at most 1, got ${JSON.stringify(share)}`);
  for (const key of ['maxSpillBytes', 'maxSpillTtlSeconds'] as const) {
    const value = partial[key] ?? limits[key];
    limits[key] = checkInteger(key, value, { min: key === 'maxSpillTtlSeconds' ? 0 : 1 });
  }
  return { ...limits, spillMemoryShare: share };
}

/** What the store logs (throttled) when it refuses a spill, by reason. */
export const SPILL_REFUSALS = Object.freeze({
  tooLong: 'a result too long to keep whole (past maxSpillBytes) was bounded without its full text',
  noRoom: 'redis has no room for more spilled results (spillMemoryShare of its maxmemory is used): results are bounded without their full text until spills expire',
  noInfo: "redis refused INFO in the finish script (an ACL without it?): no spill can be checked against maxmemory, so none is kept; allow INFO to dispatch's Redis user (+info)",
});

/** Whether `text` fits in `maxBytes` of UTF-8, measuring it only when its length leaves a doubt. */
export function fitsBytes(text: string, maxBytes: number): boolean {
  if (text.length * 3 <= maxBytes) return true;
  if (text.length > maxBytes) return false;
  return Buffer.byteLength(text, 'utf8') <= maxBytes;
}

/**
 * The idempotency write of a step whose spill is not kept (refused, or lost with a failed write):
 * no handle that ReadResult would not find, still `truncated` so the model knows it was cut, and
 * the warning the result gets for it (fullTextNotKept), so that a replay says so too.
 * `spillChars`, the spill's length in code points, when known.
 */
export function withoutLostHandle(step: FinishAttempt, spillChars?: number): FinishAttempt['idempotency'] {
  const idempotency = step.idempotency;
  if (idempotency?.action !== 'complete' || !step.spill || idempotency.result.resultHandle === '') return idempotency;
  const warnings = [...(idempotency.result.warnings ?? []), fullTextNotKeptWarning(spillChars ?? indexChunks(step.spill.text).totalChars)];
  return { ...idempotency, result: { ...idempotency.result, resultHandle: '', warnings } };
}
