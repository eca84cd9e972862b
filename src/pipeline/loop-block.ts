import { status } from '@grpc/grpc-js';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError, HardError } from '../errors';
import type { ResolvedTool } from '../registry';
import type { FinishAttempt, LoopBlock, LoopStreak } from '../store';
import type { TurnContext } from './pipeline-deps';
import type { LoopFailure } from './replay-record';

// The time-aware half of loop detection (DESIGN section 6): a block's cool-down, and which
// failures after which the model was told to call again later count toward the thresholds.

/**
 * The most a call refused for the probe another call holds is told to wait: the probe reports
 * within its tool's timeout, usually sooner, and then the call runs or is blocked anew.
 */
export const PROBE_HELD_WAIT_MS = 1000;

/**
 * The loop pre-check's stop (DESIGN section 6): once the op's same success has come `stop` times
 * in a row, the next identical call ends the RPC ABORTED LOOP_DETECTED without running.
 */
export function loopStop(tool: ResolvedTool, streak: LoopStreak): HardError | undefined {
  if (streak.failed || streak.count < tool.loop.stop) return undefined;
  return new HardError(status.ABORTED, 'LOOP_DETECTED', `loop detected: ${tool.name} returned the same result the last ${streak.count} times it was called with the same input`);
}

/**
 * A failure after which the model was told to call again later, unchanged: the tool did not run
 * (a 429, a refusal before it ran: an unreachable tool, no worker) and calling again may succeed,
 * or the tool said it was busy and when to call again (a 503 with Retry-After). BREAKER_OPEN,
 * STORE_UNAVAILABLE and a rate limit's or cap's refusal end before any record.
 */
export function callAgainLater(failure: LoopFailure): boolean {
  return failure.recoverable === true && (failure.phase === 'before' || failure.retryAfterMs !== undefined);
}

/**
 * The wait a failure told the model before calling again unchanged, in ms; undefined when it told
 * none (see callAgainLater). One that asked to be called again later without saying when (a 429
 * without Retry-After, an unreachable tool) is taken to have told `assumedMs` (the tool's
 * loop.assumed_wait_ms): the same call sooner is early.
 */
export function toldWaitMs(failure: LoopFailure | undefined, assumedMs: number): number | undefined {
  if (!failure || !callAgainLater(failure)) return undefined;
  return failure.retryAfterMs === undefined || failure.retryAfterMs === 0 ? assumedMs : failure.retryAfterMs;
}

/** `error` telling the model to wait `waitMs` (retry_after_ms) before calling again. */
export function withWait(error: DispatchError, waitMs: number | undefined): DispatchError {
  if (waitMs === undefined || waitMs === error.retryAfterMs) return error;
  return error.retold(error.message, { retryAfterMs: waitMs, cause: error.cause });
}

/**
 * How many times in a row the call failed the same way, as the model is told: the counted streak,
 * or the answers to call again later in a row when more (the first, and those waited out, do not count).
 */
export const failuresInARow = (streak: LoopStreak): number => Math.max(streak.count, streak.toldRun ?? 0);

/**
 * Whether a call came early: before the wait the op's newest record told had passed, a record the
 * model had read. One of this turn's (`toldInTurn`: calls sent together came before any answer)
 * or of the call's own last attempt (`ownRetry`) is not.
 */
export function cameEarly(streak: LoopStreak, ownRetry: boolean, toldInTurn: boolean): boolean {
  return !ownRetry && !toldInTurn && streak.waitMs !== undefined;
}

/** Notes that `op`'s record told a wait in this turn (see cameEarly); true when `op` had one already. */
export function toldInTurn(turn: TurnContext, op: string, record?: FinishAttempt['record']): boolean {
  const told = turn.toldWaits?.has(op) ?? false;
  if (record?.waitMs !== undefined) (turn.toldWaits ??= new Set()).add(op);
  return told;
}

/**
 * The wait a failed attempt's result tells when the call's next identical call would be refused
 * LOOP_BLOCKED for longer than the wait it told (`toldMs`): the block's; undefined otherwise (or
 * when it told none: a failure not to call again unchanged).
 */
export function blockedWaitMs(streak: LoopStreak, tool: ResolvedTool, toldMs: number | undefined): number | undefined {
  const left = toldMs === undefined ? undefined : blockLeftMs(streak, tool);
  return left !== undefined && left > toldMs! ? Math.ceil(left) : undefined;
}

/**
 * How long a failed streak of `tool`'s keeps its call refused, in ms: undefined when the streak
 * blocks nothing (fewer failures than failure_block_threshold), 0 when its cool-down is over (the
 * call runs once more: a probe), else the time left until the later of the cool-down after the
 * newest counted failure (loop.block_cooldown_ms) and the end of the wait the op's newest record
 * told (a Retry-After longer than the cool-down). So no block outlives both. A streak of refusals
 * before the store step (LoopStreak.refused: the call never ran) blocks nothing: refused-loops.ts.
 */
export function blockLeftMs(streak: LoopStreak, tool: ResolvedTool): number | undefined {
  if (!streak.failed || streak.refused || streak.count < tool.loop.failureBlock) return undefined;
  return Math.max(0, tool.loop.blockCooldownMs - (streak.sinceMs ?? Infinity), streak.waitMs ?? 0);
}

/** `tool`'s block as beginAttempt takes it (BeginAttempt.block); its probe is held `leaseMs` at most, by `holder` (see giveBack). */
export const loopBlockOf = (tool: ResolvedTool, leaseMs: number, holder: string): LoopBlock => ({ threshold: tool.loop.failureBlock, cooldownMs: tool.loop.blockCooldownMs, leaseMs, holder });

/** A wait as the model reads it: 300 ms, 30 s. */
export const inWords = (ms: number): string => (ms < 1000 ? `${ms} ms` : `${Math.ceil(ms / 1000)} s`);

/**
 * The refusal of a call its streak blocks (`leftMs`, blockLeftMs, not undefined), or undefined when
 * it runs: the block's cool-down is over and it is the probe, not another call's holding it for
 * `probeHeldMs` more (BeginAttemptResult.probeHeldMs: told to call again in at most PROBE_HELD_WAIT_MS).
 */
export function blockRefusal(streak: LoopStreak, leftMs: number, probeHeldMs: number | undefined): DispatchError | undefined {
  if (leftMs > 0) return loopBlocked(streak, leftMs);
  return probeHeldMs === undefined ? undefined : loopBlocked(streak, Math.min(probeHeldMs, PROBE_HELD_WAIT_MS), true);
}

/** The refusal of a blocked call, `leftMs` before it may run once more (`probing`: another call is running it once more now). */
export function loopBlocked(streak: LoopStreak, leftMs: number, probing = false): DispatchError {
  const wait = Math.max(1, Math.ceil(leftMs));
  const when = inWords(wait);
  const now = probing ? `; another call of it is running once more now to see whether it works, call again in ${when}` : `; dispatch refuses to run it again for ${when}, then runs it once more`;
  return new DispatchError(ErrorKind.LOOP_BLOCKED, `this exact call failed the same way ${failuresInARow(streak)} times in a row${now}`, {
    phase: 'before',
    recoverable: false,
    retryAfterMs: wait,
    suggestion: `This exact call has failed the same way several times; change the arguments or take a different approach. Unchanged, it runs again no sooner than in ${when} (retry_after_ms).`,
  });
}

/** What decides how an attempt's result is recorded in the loop window. */
export interface WindowRecordInput {
  /** The loop record (loopRecordOf); undefined when nothing is recorded (a cancelled attempt). */
  readonly result: string | undefined;
  readonly failure: LoopFailure | undefined;
  /** The same failure as the call's last attempt (sameFailure): the window counts it already. */
  readonly repeated: boolean;
  /** The call came before the wait the op's newest record told had passed (LoopStreak.waitMs). */
  readonly early: boolean;
  /** The call ran as a block's probe (blockLeftMs gave 0). */
  readonly probe: boolean;
  /** The op's answers to call again later in a row before the call (LoopStreak.toldRun). */
  readonly toldRun: number | undefined;
  /** The tool's stop_threshold: so many answers to call again later in a row, the next counts. */
  readonly toldCap: number;
  /** The tool's loop.assumed_wait_ms (toldWaitMs). */
  readonly assumedWaitMs: number;
  readonly window: number;
}

/**
 * The loop-window record of an attempt. A failure after which the model was told to call again
 * later counts toward the thresholds only when the call was early (it came before the wait the
 * op's last record told had passed: the model is hammering, not waiting), was a block's probe, or
 * came after `toldCap` such answers in a row (a model waiting as told forever is stopped too);
 * otherwise it is recorded without counting (it neither adds to the streak nor breaks it), so
 * that the next call's earliness is known. A repeat within one call is recorded, uncounted, only
 * when it told a wait (the newer one), as a retry's (it adds nothing to the run of answers to call
 * again later: only the model's calls do); other repeats not at all.
 */
export function windowRecord(input: WindowRecordInput): FinishAttempt['record'] {
  const { result, failure, repeated } = input;
  if (result === undefined) return undefined;
  const waitMs = toldWaitMs(failure, input.assumedWaitMs);
  if (repeated && waitMs === undefined) return undefined;
  const counts = !repeated && (waitMs === undefined || input.early || input.probe || (input.toldRun ?? 0) >= input.toldCap);
  const record = { result, failed: failure !== undefined, window: input.window };
  if (waitMs === undefined) return record;
  if (repeated) return { ...record, counts: false, waitMs, retry: true };
  return counts ? { ...record, waitMs } : { ...record, counts: false, waitMs };
}
