import { setMaxListeners } from 'node:events';
import type { ToolCall, ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { HardError } from '../errors';
import { executeCall, onAbort, type PipelineDeps, type TurnContext } from '../pipeline';
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
  const controller = new AbortController();
  // Each running call's attempt links its own signal to the wave's.
  setMaxListeners(Math.max(10, Math.min(limit, entries.length) + 2), controller.signal);
  // One rejection shared by every call's race, rather than a listener per call.
  const aborted = new Promise<never>((_, reject) => controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true }));
  aborted.catch(() => undefined);
  const onTurnAbort = () => controller.abort(HardError.cancelled());
  let unsubscribe: (() => void) | undefined;
  if (turn.signal.aborted) onTurnAbort();
  else unsubscribe = onAbort(turn.signal, onTurnAbort);
  const waveTurn: TurnContext = { ...turn, signal: controller.signal };
  const results: ToolResult[] = new Array<ToolResult>(entries.length);
  let failure: { error: unknown } | undefined;
  try {
    await runBounded(entries.length, limit, async (index) => {
      if (controller.signal.aborted) return;
      const { call, tracker } = entries[index]!;
      const work = executeCall(deps, waveTurn, call, tracker.observer);
      tracker.started(work);
      work.catch(() => undefined);
      try {
        results[index] = await Promise.race([work, aborted]);
      } catch (error) {
        if (failure) return;
        failure = { error };
        controller.abort(error);
      }
    });
  } finally {
    unsubscribe?.();
  }
  if (failure) throw failure.error;
  if (controller.signal.aborted) throw controller.signal.reason;
  return results;
}
