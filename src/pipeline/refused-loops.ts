import { status } from '@grpc/grpc-js';
import { DispatchError, HardError, kindName } from '../errors';
import { TOOL_DEFAULTS } from '../options';
import type { ResolvedTool } from '../registry';
import type { LoopStreak } from '../store';
import { loopOp } from './loop-op';
import type { CallObserver } from './observer';
import type { PipelineDeps, TurnContext } from './pipeline-deps';
import { loopRecordOf, sameFailure } from './replay-record';
import type { CallProgress } from './run-attempt';
import { storeWarn } from './store-warn';

// Loop detection of calls refused before their store step (DESIGN section 6 names only calls that
// reach it): a policy's or hook's refusal (step 2), the arguments' and an unknown name's (once per
// call). Without it a model re-sending a call dispatch refuses was never stopped: no record, no
// warning, no LOOP_DETECTED, however many times it came.

/** The refusals the loop window records (markRefusal), with what refused them ('' when not said). */
const counted = new WeakMap<DispatchError, string>();

/**
 * Marks `refusal` as one the loop window records when it ends an attempt before its store step: a
 * block rule's or hook's, a headless ask's, a denied approval's. Not an approval nobody answered
 * (calling again asks again, as its suggestion says), nor a refusal for want of room or a session
 * that ended: the same call may pass later. `by`: what refused it, as events and spans name it
 * (a rule's name or `policies[i]`, `endpoint`, `hook`). Gives `refusal`.
 */
export function markRefusal(refusal: DispatchError, by = ''): DispatchError {
  counted.set(refusal, by);
  return refusal;
}

/** What refused `error`, when it is a refusal that said (markRefusal's `by`). */
export const refusedBy = (error: DispatchError): string | undefined => counted.get(error) || undefined;

/** Whether `error` is a refusal the loop window records (see markRefusal). */
export const countsAsRefusal = (error: DispatchError): boolean => counted.has(error);

/** What the thresholds of a refused call are: its tool's `loop:` (the defaults for an unknown name). */
export interface RefusalThresholds {
  readonly failureWarn: number;
  readonly stop: number;
}

/** A refused call as recordRefusal records it. */
export interface RefusedCall {
  /** The loop operation (loopOp, refusedCallOp). */
  readonly op: string;
  /** The tool's name as the stop names it (quoted, for an unknown one). */
  readonly name: string;
  readonly loop: RefusalThresholds;
  /** The attempt the events name (0: refused once per call, before any attempt). */
  readonly attempt: number;
  /** The call's progress, for an attempt: a retry refused as its last attempt was is no repeat (sameFailure). */
  readonly progress?: CallProgress;
}

/**
 * Records `refusal` of `call` in the session's loop window, as a failure of its op whose record is
 * the error's (loopRecordOf), in one store step (finishAttempt records and gives the op's streak
 * after it): at the tool's failure warning threshold `warnings` gets the loop warning and
 * LOOP_WARNING is emitted; at its stop threshold the RPC ends ABORTED LOOP_DETECTED (thrown, LOOP_STOP
 * emitted first). A different refusal or result of the op resets the streak, as for failures. The
 * record is `refused`: it arms no LOOP_BLOCKED (LoopStreak.refused). A store that fails records
 * nothing (logged): the refusal stands as it is.
 */
export async function recordRefusal(deps: PipelineDeps, turn: TurnContext, obs: CallObserver, call: RefusedCall, refusal: DispatchError, warnings: string[]): Promise<void> {
  const result = loopRecordOf('', refusal);
  if (call.progress && sameFailure(call.progress, call.op, result, true)) return;
  const scope = turn.scope ?? { tenant: turn.tenant, sessionId: turn.sessionId };
  let streak: LoopStreak;
  try {
    let after = deps.store.finishAttempt({ scope, op: call.op, record: { result, failed: true, window: deps.limits.loopWindow, refused: true } });
    if (after instanceof Promise) after = await after;
    streak = after.streak;
  } catch (error) {
    storeWarn(deps.logger)('store write after a refused call failed; its loop record dropped', { tool: call.name, error: (error as Error).message });
    return;
  }
  if (!streak.failed) return;
  if (streak.count >= call.loop.stop) {
    const stop = new HardError(status.ABORTED, 'LOOP_DETECTED', `loop detected: the same call of ${call.name} was refused the same way ${streak.count} times in a row (${kindName(refusal.kind)})`);
    obs.loopStop(call.attempt, stop.message);
    throw stop;
  }
  if (streak.count < call.loop.failureWarn) return;
  const message = `loop warning: this call was refused the same way ${streak.count} times in a row; at ${call.loop.stop} dispatch ends the turn (LOOP_DETECTED), so change the arguments or the approach`;
  warnings.push(message);
  if (call.progress) (call.progress.failureWarnings ??= []).push(message);
  obs.loopWarning(call.attempt, message);
}

/** The thresholds of a call of an unknown name: the tools' defaults. */
export const DEFAULT_REFUSAL_THRESHOLDS: RefusalThresholds = Object.freeze({ failureWarn: TOOL_DEFAULTS.failureWarn, stop: TOOL_DEFAULTS.loopStop });

/**
 * Ends an attempt of `tool` with `args` that step 2 refused with `refusal`, by `end()`: recorded
 * first when it counts (markRefusal; see recordRefusal), so that `end` reads the warning it added.
 * Other refusals (a cap's, a rate's, a breaker's, an approval unanswered) end it at once.
 */
export function refusedAttempt<T>(deps: PipelineDeps, turn: TurnContext, obs: CallObserver, tool: ResolvedTool, args: unknown, attempt: number, progress: CallProgress, refusal: DispatchError, warnings: string[], end: () => T): T | Promise<T> {
  if (!countsAsRefusal(refusal)) return end();
  return recordRefusal(deps, turn, obs, { op: loopOp(tool, args), name: tool.name, loop: tool.loop, attempt, progress }, refusal, warnings).then(end);
}
