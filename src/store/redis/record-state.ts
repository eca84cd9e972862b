import type { ClaimOutcome, RecordState, StoredResult } from '../store';
import type { PendingRecord } from './pending-writes';

/** A claim's outcome as begin-attempt.lua answers it; a record waiting on this replica answers for Redis's. */
export function claimOutcome(state: string, payload: string, waiting: PendingRecord | undefined): ClaimOutcome | undefined {
  switch (state) {
    case 'waiting':
      // The completion (or UNKNOWN mark) this replica could not write yet answers for it.
      return waiting?.idempotency?.action === 'complete' ? { state: 'completed', result: waiting.idempotency.result } : { state: 'unknown' };
    case 'claimed':
    case 'in_progress':
    case 'unknown':
      return { state };
    case 'completed':
      return { state, result: JSON.parse(payload) as StoredResult };
    default:
      return undefined;
  }
}

/** The state of a stored idempotency record (see begin-attempt.lua for its encoding). */
export function recordState(held: string): RecordState {
  return held.startsWith('C') ? 'completed' : held.startsWith('U') ? 'unknown' : 'in_progress';
}
