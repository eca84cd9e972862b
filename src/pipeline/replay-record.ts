import type { DispatchError } from '../errors';
import { shortHash } from '../json';
import type { ResolvedTool } from '../registry';
import type { LoopStreak, SessionScope, StoredResult } from '../store';
import type { CallObserver } from './observer';
import type { PipelineDeps } from './pipeline-deps';
import type { CallProgress } from './run-attempt';
import { callAgainLater, failuresInARow, inWords } from './loop-block';
import { storeWarn } from './store-warn';

/** What the loop window reads of a failure. */
export type LoopFailure = Pick<DispatchError, 'kind' | 'message'> & Partial<Pick<DispatchError, 'phase' | 'recoverable' | 'retryAfterMs'>>;

/**
 * What the loop window compares of an attempt's result: the output of a success, the kind and
 * message of a failure; of one that asked to be called again later, its kind alone (whether it
 * counts is windowRecord's to say), so that 429s whose bodies differ (a request id) and a 429
 * alternating with a 503 make one streak. A bounded success (`whole`: the text it was cut from) is compared by its
 * whole text, as wholeRecord gives it: its head and tail alone took a poll whose answers differ
 * only in the omitted middle for the same result ten times, and ended it LOOP_DETECTED. A replay
 * of the stored result records what its first attempt did (StoredResult.loopRecord), so replays
 * of a bounded result are repeats from the first.
 */
export function loopRecordOf(output: string, failure: LoopFailure | undefined, whole?: string): string {
  if (!failure) return whole === undefined ? output : wholeRecord(whole);
  return failureRecord(failure);
}

/** A bounded result's loop record: its whole text's hash, which no output the model is shown equals (a NUL first). */
export const wholeRecord = (whole: string) => `\u0000whole\u0000${shortHash(whole)}`;

const failureRecord = (failure: LoopFailure) => `${failure.kind}\u0000${callAgainLater(failure) ? 'call again later' : failure.message}`;

/**
 * Records a replayed result in the session's loop window, as the attempt that ran recorded its
 * own, and gives the op's streak after it (undefined when the store failed: no record, no
 * warning). One store step: a replay takes no other after its claim.
 */
export async function recordReplay(deps: PipelineDeps, scope: SessionScope, op: string, stored: StoredResult): Promise<LoopStreak | undefined> {
  // A stored failure ran to its answer (a claim is kept only then): never one to call again later.
  // A bounded result's record is its whole text's (records of older versions have none: its output).
  const result = stored.isError ? failureRecord({ kind: stored.errorKind ?? 0, message: stored.errorMessage ?? '' }) : (stored.loopRecord ?? stored.output);
  try {
    const after = await deps.store.finishAttempt({ scope, op, record: { result, failed: stored.isError, window: deps.limits.loopWindow } });
    return after.streak;
  } catch (error) {
    storeWarn(deps.logger)('store write after a replay failed; its loop record dropped', { error: (error as Error).message });
    return undefined;
  }
}

/**
 * True when this attempt's failure adds nothing to the loop window's counts, nor warns: a retry
 * failing with the same loop record, on the same operation, as the call's last attempt (the window
 * already counts it), or a failure that records nothing (`record` undefined: a cancelled attempt).
 * Remembers this attempt's failure (or forgets the last one, on a success) for the next; one that
 * records nothing leaves the last one as it was.
 */
export function sameFailure(progress: CallProgress, op: string, record: string | undefined, failed: boolean): boolean {
  if (!failed) {
    progress.lastFailure = undefined;
    return false;
  }
  if (record === undefined) return true;
  const last = progress.lastFailure;
  progress.lastFailure = { op, record };
  return last !== undefined && last.op === op && last.record === record;
}

/** What a call keeps of the loop warnings its failed attempts added to its warnings (part of CallProgress). */
export interface FailureWarnings {
  /** Those loop warnings, which a later attempt's result carries until one succeeds (see dropFailureWarnings). */
  failureWarnings?: string[];
}

/** Notes `warning` (addLoopWarning's) when the attempt `failed`; true when there is one. */
export function noteLoopWarning(progress: FailureWarnings, failed: boolean, warning: string | undefined): boolean {
  if (warning !== undefined && failed) (progress.failureWarnings ??= []).push(warning);
  return warning !== undefined;
}

/**
 * Takes from a call's `warnings`, once an attempt of it succeeded, the loop warnings its failed
 * attempts added, and adds the tool's own (`own`). A failure's loop warning stays in the warnings
 * the call's later attempts start from, so that a retry failing the same way (not counted again)
 * or refused before its tool ran still says it; a retry that succeeded answered with "failed the
 * same way ... change the approach" beside its result.
 */
export function dropFailureWarnings(progress: FailureWarnings, warnings: string[], own: readonly string[] | undefined): void {
  for (const warning of progress.failureWarnings ?? []) {
    const at = warnings.indexOf(warning);
    if (at !== -1) warnings.splice(at, 1);
  }
  progress.failureWarnings = undefined;
  if (own) warnings.push(...own);
}

/**
 * Adds the loop warning the streak calls for, if any, and gives it. `blockedMs`: the next
 * identical call is refused for longer than the tool asked to wait, and the result says so (blockedWaitMs).
 */
export function addLoopWarning(streak: LoopStreak, tool: ResolvedTool, obs: CallObserver, attempt: number, warnings: string[], blockedMs?: number): string | undefined {
  const threshold = streak.failed ? tool.loop.failureWarn : tool.loop.warn;
  if (streak.count < threshold) return undefined;
  const refused = blockedMs === undefined ? '' : `; dispatch refuses to run it again unchanged for ${inWords(blockedMs)}, longer than the tool asked (retry_after_ms)`;
  const message = streak.failed
    ? `loop warning: this call has failed the same way ${failuresInARow(streak)} times in a row${refused}; change the arguments or the approach`
    : `loop warning: ${tool.name} returned the same result the last ${streak.count} times it was called with the same input; use the result you have or change the approach (at ${tool.loop.stop} such results, the next identical call ends the turn)`;
  warnings.push(message);
  obs.loopWarning(attempt, message);
  return message;
}
