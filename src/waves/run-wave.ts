import type { ToolCall, ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { HardError } from '../errors';
import { createAbortScope, executeCall, onAbort, type PipelineDeps, type TurnContext } from '../pipeline';
import type { CallTracker } from './call-tracker';
import { runBounded } from './run-bounded';

/** One call of a wave and its tracker. */
export interface WaveEntry {
  readonly call: ToolCall;
  readonly tracker: CallTracker;
}

/**
 * Runs one wave: its calls through the whole pipeline, at most `limit` at once, under the wave's
 * own abort signal, which the turn's signal (client cancel, deadline, shutdown) also fires. The
 * first hard error aborts the wave: running siblings see the abort in their executors, calls not
 * yet started never start, and that error is thrown, so the wave's finished results are
 * discarded. Each call is raced against the wave's signal, so the RPC ends without waiting for a
 * sibling that is slow to unwind. Results are in `entries` order.
 */
export async function runWave(deps: PipelineDeps, turn: TurnContext, entries: readonly WaveEntry[], limit: number): Promise<ToolResult[]> {
  // The wave's own abort scope: no AbortController unless an executor or hook asks for a signal.
  const scope = createAbortScope();
  // One rejection shared by every call's race, rather than a subscription per call.
  const aborted = new Promise<never>((_, reject) => onAbort(scope.signal, () => reject(scope.signal.reason)));
  aborted.catch(() => undefined);
  const onTurnAbort = () => scope.abort(HardError.cancelled());
  let unsubscribe: (() => void) | undefined;
  if (turn.signal.aborted) onTurnAbort();
  else unsubscribe = onAbort(turn.signal, onTurnAbort);
  const waveTurn: TurnContext = { ...turn, signal: scope.signal };
  const results: ToolResult[] = new Array<ToolResult>(entries.length);
  let failure: { error: unknown } | undefined;
  try {
    await runBounded(entries.length, limit, async (index) => {
      if (scope.signal.aborted) return;
      const { call, tracker } = entries[index]!;
      const work = executeCall(deps, waveTurn, call, tracker.observer);
      tracker.started(work);
      work.catch(() => undefined);
      try {
        results[index] = await Promise.race([work, aborted]);
      } catch (error) {
        if (failure) return;
        failure = { error };
        scope.abort(error);
      }
    });
  } finally {
    unsubscribe?.();
  }
  if (failure) throw failure.error;
  if (scope.signal.aborted) throw scope.signal.reason;
  return results;
}
