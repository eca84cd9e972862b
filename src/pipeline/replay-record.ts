import type { DispatchError } from '../errors';
import type { ResolvedTool } from '../registry';
import type { LoopStreak, SessionScope, StoredResult } from '../store';
import type { CallObserver } from './observer';
import type { PipelineDeps } from './pipeline-deps';
import type { CallProgress } from './run-attempt';

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

/**
 * True when this attempt failed with the same loop record, on the same operation, as the call's
 * last attempt: a retry failing again, which the loop window already counts. Remembers this
 * attempt's failure (or forgets the last one, on a success) for the next.
 */
export function sameFailure(progress: CallProgress, op: string, record: string | undefined, failed: boolean): boolean {
  const last = progress.lastFailure;
  progress.lastFailure = failed && record !== undefined ? { op, record } : undefined;
  return failed && last !== undefined && last.op === op && last.record === record;
}

/** Adds the loop warning the streak calls for, if any; true when it did. */
export function addLoopWarning(streak: LoopStreak, tool: ResolvedTool, obs: CallObserver, attempt: number, warnings: string[]): boolean {
  const threshold = streak.failed ? tool.loop.failureWarn : tool.loop.warn;
  if (streak.count < threshold) return false;
  const message = streak.failed
    ? `loop warning: this call has failed the same way ${streak.count} times in a row; change the arguments or the approach`
    : `loop warning: ${tool.name} returned the same result ${streak.count} times in a row for the same input; use the result you have or change the approach`;
  warnings.push(message);
  obs.loopWarning(attempt, message);
  return true;
}
