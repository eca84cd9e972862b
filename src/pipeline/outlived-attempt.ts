import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { HardError } from '../errors';
import type { ResolvedTool } from '../registry';
import type { SessionScope } from '../store';
import type { AttemptContext, CallKey } from './attempt-context';
import { countsForBreaker } from './attempt-end';
import { claimEnd, runFailure, runResult } from './attempt-run';
import type { BreakerTicket } from './guards';
import type { ToolOutput } from './middleware';
import type { PipelineDeps, TurnContext } from './pipeline-deps';
import type { GuardedOutcome, Linger } from './signals';
import { storeWarn } from './store-warn';
import { lateWork, recordLateAnswer } from './late-answer';

// A side-effecting attempt that outlives its client's deadline (a Python agent author's probe: a
// client's retry after its own deadline found OUTCOME_UNKNOWN for the record's whole TTL, an hour
// by default, though the tool had run to its end: dispatch had cut its request off mid-flight).

/** How close to the turn's deadline its abort counts as the deadline's (timers fire a little late or early). */
const DEADLINE_SLOP_MS = 20;

/**
 * When a claimed side-effecting attempt's run outlives its turn: the turn was aborted because its
 * deadline passed (not the client's cancel, which still aborts the tool, nor dispatchd's stop),
 * and its request reached the tool (cut off, it would leave the outcome unknown). It then runs to
 * its end or its own timeout; dispatchd's hard stop (`until`) ends it as a cancel does.
 */
export function lingerPastDeadline(turn: TurnContext, context: () => AttemptContext | undefined): Linger {
  const when = () => {
    const ctx = context();
    return ctx !== undefined && ctx.delivered !== 'pending' && turn.deadline !== Infinity && Date.now() >= turn.deadline - DEADLINE_SLOP_MS;
  };
  return { when, until: turn.shutdown };
}

/** What the outlived attempt holds, to give back or record once its run ends. */
export interface OutlivedClaim {
  readonly scope: SessionScope;
  readonly op: string;
  readonly key: CallKey;
  readonly owner: string;
  readonly breaker: string;
  readonly ticket: BreakerTicket;
}

/** Each outlived attempt's HardError, with the end of its run and record (gated holds its slot until then). */
const outliving = new WeakMap<object, Promise<void>>();

/**
 * The turn's end (HardError `cancelled`: the RPC ends DEADLINE_EXCEEDED) for an attempt whose run
 * goes on: once `lingering` ends, its idempotency record is written as its attempt's would have
 * been (the result, or UNKNOWN if it failed while it ran or reached its timeout), so the same call
 * made again gets IN_PROGRESS meanwhile, then the replay; its breaker hears of it; an info line
 * says so. No loop record, memory entry or event: the turn that made it is over.
 */
export function outlivedAttempt(deps: PipelineDeps, turn: TurnContext, tool: ResolvedTool, callId: string, attempt: number, claim: OutlivedClaim, lingering: Promise<GuardedOutcome<ToolOutput>>, started: number, context: () => AttemptContext | undefined): HardError {
  const ended = lingering
    .then(async (run) => {
      const error = runFailure(deps, tool, callId, attempt, run, context(), tool.timeoutMs, true);
      const durationMs = performance.now() - started;
      const { result, spill } = runResult(deps, turn.sessionId, tool, callId, attempt, run, error, Math.round(durationMs), []);
      deps.guards.breaker.record(claim.breaker, claim.ticket, { ok: !error, counts: !error || countsForBreaker(error), noHost: error?.noHost, durationMs });
      const idempotency = claimEnd(claim.key, tool, claim.owner, result, error, undefined);
      const written = await deps.store.finishAttempt({ scope: claim.scope, op: claim.op, idempotency, spill });
      const late = lateWork(run, context(), idempotency, written);
      if (late) recordLateAnswer(deps, turn.sessionId, tool, callId, attempt, { ...claim, answered: context()?.lateAnswered }, late, started);
      deps.logger.info("a side-effecting call outlived its client's deadline; its outcome is recorded for the same call made again", { tool: tool.name, tool_call_id: callId, attempt, outcome: error ? ErrorKind[error.kind] : 'OK' });
    })
    .catch((error: unknown) => storeWarn(deps.logger)("the record of a call that outlived its client's deadline was not written", { tool: tool.name, error: (error as Error).message }));
  const hard = HardError.cancelled();
  outliving.set(hard, ended);
  return hard;
}

/** The end of the run `error` left going on (an outlived attempt's), else undefined. */
export const outlivedEnd = (error: unknown): Promise<void> | undefined => (typeof error === 'object' && error !== null ? outliving.get(error) : undefined);
