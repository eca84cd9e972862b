import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError } from '../errors';
import type { ResolvedTool } from '../registry';
import type { SessionScope } from '../store';
import type { AttemptContext, CallKey } from './attempt-context';
import { claimEnd, runFailure, runResult } from './attempt-run';
import type { ToolOutput } from './middleware';
import type { FinishAttempt, FinishAttemptResult } from '../store';
import type { PipelineDeps } from './pipeline-deps';
import type { GuardedOutcome } from './signals';
import { storeWarn } from './store-warn';

// A worker's answer after its call timed out (a tool author's probe: a side-effecting call whose
// worker answered 1.5 s past its 1 s timeout stayed OUTCOME_UNKNOWN for the record's hour, though
// the worker had said what it did: dispatch had dropped the answer).

/** The claim whose UNKNOWN mark a late answer replaces. */
export interface LateClaim {
  readonly scope: SessionScope;
  readonly op: string;
  readonly key: CallKey;
  readonly owner: string;
  /** What cut the attempt off, as the log line says it: its timeout, or its client's cancel. @default 'timeout' */
  readonly cutBy?: 'timeout' | 'cancel';
  /** The tool had answered before the cut, its output's redaction not (AttemptContext.lateAnswered): the log line says so. */
  readonly answered?: boolean;
}

/**
 * The run a late answer may still come from: an attempt that timed out, or that its client's
 * cancel cut off, while its executor listens on (ExecutorContext.lateAnswerPending), whose UNKNOWN
 * mark was written; else undefined. Before, a worker's answer to a cancelled call, within its
 * timeout, was dropped: the same call was OUTCOME_UNKNOWN for the record's hour.
 */
export function lateWork(run: GuardedOutcome<ToolOutput>, context: AttemptContext | undefined, idempotency: FinishAttempt['idempotency'], written: FinishAttemptResult): Promise<ToolOutput> | undefined {
  return (run.kind === 'timeout' || run.kind === 'cancelled') && context?.latePending && idempotency?.action === 'unknown' && !written.keptOut ? run.work : undefined;
}

/**
 * Once `work` (the timed-out attempt's run, through the middleware: redacted as any answer) ends
 * with the tool's answer, its result, or its error AFTER execution, replaces the attempt's UNKNOWN
 * mark, and only that (a record ended, expired or written since stays): the same call made again
 * is replayed rather than refused OUTCOME_UNKNOWN for the record's TTL. The executor bounds the
 * wait (ExecutorContext.lateAnswerPending). No loop record, memory entry, event or breaker count:
 * the attempt was told as a timeout. An info line says what was recorded.
 */
export function recordLateAnswer(deps: PipelineDeps, sessionId: string, tool: ResolvedTool, callId: string, attempt: number, claim: LateClaim, work: Promise<ToolOutput>, started: number): void {
  work
    .then(
      (value): GuardedOutcome<ToolOutput> => ({ kind: 'done', value }),
      (error: unknown): GuardedOutcome<ToolOutput> | undefined => (error instanceof DispatchError && error.phase === 'after' ? { kind: 'failed', error } : undefined),
    )
    .then(async (run) => {
      if (run === undefined) return;
      const error = runFailure(deps, tool, callId, attempt, run, undefined, tool.timeoutMs, true);
      const durationMs = Math.round(performance.now() - started);
      const { result, spill } = runResult(deps, sessionId, tool, callId, attempt, run, error, durationMs, []);
      const end = claimEnd(claim.key, tool, claim.owner, result, error, undefined);
      if (end.action !== 'complete') return;
      const written = await deps.store.finishAttempt({ scope: claim.scope, op: claim.op, idempotency: { ...end, late: true }, spill });
      const fields = { tool: tool.name, tool_call_id: callId, attempt, duration_ms: durationMs, outcome: error ? ErrorKind[error.kind] : 'OK' };
      const after = claim.cutBy === 'cancel' ? "its client's cancel cut it off" : 'its timeout';
      const answered = claim.answered === true ? `a side-effecting call's tool answered in time, and its answer was redacted after ${after}` : `a side-effecting call's tool answered after ${after}`;
      if (written.keptOut) deps.logger.info(`${answered}; its record had changed since (the session ended, or it expired), so the answer was not recorded`, fields);
      else deps.logger.info(`${answered}; the answer replaces OUTCOME_UNKNOWN for the same call made again`, fields);
    })
    .catch((error: unknown) => storeWarn(deps.logger)('the late answer of a side-effecting call was not recorded', { tool: tool.name, error: (error as Error).message }));
}
