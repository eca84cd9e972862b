import { DispatchError } from '../errors';
import type { ResolvedTool } from '../registry';
import type { CallKey } from './attempt-context';
import type { Guards, ToolRates, ToolSlots } from './guards';
import { peekMemo, type MemoHit } from './memo-hit';
import { outlivedEnd } from './outlived-attempt';
import type { Release, TurnContext } from './pipeline-deps';
import type { AttemptResult } from './run-attempt';
import { deadlineSlack, waitError, waitSignal } from './turn-error';

/** Runs `work` once the resource is held, and releases it when `work` settles. */
export async function whileHeld<T>(held: Release | Promise<Release>, work: () => Promise<T>): Promise<T> {
  const release = held instanceof Promise ? await held : held;
  try {
    return await work();
  } finally {
    release();
  }
}

/** Why an attempt skips its slot and rate turn: it will not reach its tool. */
export interface GateSkip {
  /** The memo cache's answer to a read, which memoize serves (see Invocation.memoized). */
  readonly memoized?: MemoHit;
}

/**
 * Whether an attempt skips its tool's slot and rate turn, asked once its arguments are final: a
 * rate limit and a cap count the calls that reach the API, and these do not. A read the memo
 * cache answers now (asked once the attempt holds its resource in a parallel turn; its answer is
 * served unless its resource is written or its session ends meanwhile; never a `skip_memoize`
 * tool's, which memoize does not serve). A side-effecting call whose breaker refuses it is not
 * asked here: run-attempt sends it past the gate (to its record, or refused BREAKER_OPEN). Replays and the other refusals (loop, budget, a claim in progress) are known only from the
 * store, after the turn: they take it. Undefined: the attempt takes its slot and turn.
 */
export function gateSkip(guards: Guards, tool: ResolvedTool, key: CallKey): GateSkip | undefined {
  if (!tool.readOnly) return undefined;
  if (tool.spec.skipMemoize) return undefined;
  const memoized = guards.memo && peekMemo(guards.memo, key.local);
  return memoized && { memoized };
}

/**
 * Runs `work` in one of the tool's concurrency slots, at its turn under its rate limit (dispatch's
 * own steps, between steps 2 and 3 of DESIGN section 3): both before any store step, so that no
 * idempotency claim waits with them, the slot first, so that a turn is not spent waiting for a
 * slot. A refusal (the cap full, no slot within its wait; the rate's next turn too far) is the
 * attempt's result, UNAVAILABLE before execution.
 */
export async function gated(slots: ToolSlots | undefined, rates: ToolRates | undefined, tool: ResolvedTool, turn: TurnContext, work: () => Promise<AttemptResult>, refuse: (error: unknown) => AttemptResult | Promise<AttemptResult>): Promise<AttemptResult> {
  let slot: Release | undefined;
  const wait = waitSignal(turn);
  // The waits end the deadline's slack before it: a refusal then still goes back with the turn's
  // other results, where one at the deadline came after the client had given up (DEADLINE_EXCEEDED).
  const until = Math.floor(turn.deadline - deadlineSlack(turn.deadline, turn.received));
  try {
    const taken = slots?.take(tool, wait.signal, until, rates?.longestWait(tool, until), turn.tenant);
    slot = taken instanceof Promise ? await taken : taken;
    const due = rates?.take(tool, wait.signal, until, turn.tenant);
    if (due) await due;
  } catch (error) {
    slot?.();
    if (error instanceof DispatchError) return refuse(error);
    throw waitError(turn, error);
  } finally {
    wait.stop();
  }
  if (slot === undefined) return work();
  const release = slot;
  // An attempt whose run outlived its turn (outlived-attempt) holds its slot until that run ends.
  let outlived: Promise<void> | undefined;
  try {
    return await work();
  } catch (error) {
    outlived = outlivedEnd(error);
    throw error;
  } finally {
    if (outlived) void outlived.finally(release);
    else release();
  }
}
