import type { BeginAttempt } from '../store';
import type { PendingRecord } from './pending-writes';

/**
 * What a begin step sent but never answered (timed out: Redis frozen or slow, or its connection
 * lost) must give back once Redis answers: the step may still land late and take its claim and its
 * op's loop-block probe, while its attempt failed STORE_UNAVAILABLE before running anything, so no
 * finish step will ever give them back. Unreleased, the claim holds its key IN_PROGRESS and the
 * probe refuses every identical call LOOP_BLOCKED, each for its whole lease (the tool's timeout +
 * 5 s). Undefined when the step could take neither (no owned claim, a peek or no block).
 *
 * One record for both: the claim's release with the probe (kept until written, as any owned
 * release), else the probe alone, kept until its lease would end counted from `sentAt` (a begin
 * landing later holds it later: only while Redis stays unwritable that long is the give-back
 * dropped first). It must land after a late step: one landing before it would free nothing and
 * leave the probe the step then takes. It does: Redis runs one connection's commands in order, and
 * a new connection (the frozen one dropped, see dropDeadSockets) is ready, so written to, only once
 * Redis has answered it, after running what the old one had sent. finish-attempt.lua frees only
 * this holder's probe and deletes only this owner's claim in progress: for a step that took
 * nothing (not due, another call's probe), it frees nothing.
 */
export function unansweredBegin({ scope, op, claim, block }: BeginAttempt, sentAt: number): PendingRecord | undefined {
  // As begin-attempt.lua: a peek (lease 0) takes no probe; none is given back without a holder.
  const probe = block && !block.peek && block.holder ? block.holder : undefined;
  if (claim?.owner) return { scope, op, idempotency: { key: claim.key, action: 'release', owner: claim.owner }, unusedProbe: probe };
  return probe ? { scope, op, unusedProbe: probe, probeUntil: sentAt + block!.leaseMs } : undefined;
}
