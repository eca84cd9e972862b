import type { DispatchError } from '../errors';
import type { LoopStreak, SessionScope, StoredResult } from '../store';
import type { PipelineDeps } from './pipeline-deps';

/**
 * What the loop window compares of an attempt's result: the output the model is shown (bounded:
 * head, tail and the count omitted) of a success, the kind and message of a failure. A replay of
 * the stored result records the same, so replays of a bounded result are repeats from the first.
 */
export function loopRecordOf(output: string, failure: Pick<DispatchError, 'kind' | 'message'> | undefined): string {
  return failure ? `${failure.kind}\u0000${failure.message}` : output;
}

/**
 * Records a replayed result in the session's loop window, as the attempt that ran recorded its
 * own, and gives the op's streak after it (undefined when the store failed: no record, no
 * warning). One store step: a replay takes no other after its claim.
 */
export async function recordReplay(deps: PipelineDeps, scope: SessionScope, op: string, stored: StoredResult): Promise<LoopStreak | undefined> {
  const result = loopRecordOf(stored.output, stored.isError ? { kind: stored.errorKind ?? 0, message: stored.errorMessage ?? '' } : undefined);
  try {
    const after = await deps.store.finishAttempt({ scope, op, record: { result, failed: stored.isError, window: deps.limits.loopWindow } });
    return after.streak;
  } catch (error) {
    deps.logger.warn('store write after a replay failed; its loop record dropped', { error: (error as Error).message });
    return undefined;
  }
}
