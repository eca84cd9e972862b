import type { ToolCall, ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { HardError } from '../errors';
import { copyTurn, createAbortScope, executeCall, onAbort, type PipelineDeps, type ReadArguments, type TurnContext } from '../pipeline';
import type { CallTracker } from './call-tracker';

/** One call of a wave and its tracker. */
export interface WaveEntry {
  readonly call: ToolCall;
  readonly tracker: CallTracker;
  /** Its arguments as the planner read them, if it did (see callKeys). */
  readonly read?: ReadArguments;
}

/**
 * Runs one wave: its calls through the whole pipeline, at most `limit` at once and started in
 * request order, under the wave's own abort signal, which the turn's signal (client cancel,
 * deadline, shutdown) also fires. The first hard error aborts the wave: running siblings see the
 * abort in their executors, calls not yet started never start, and that error is thrown, so the
 * wave's finished results are discarded. The wave settles at that error or abort without waiting
 * for a sibling that is slow to unwind. Results are in `entries` order.
 *
 * Once dispatchd drains (`turn.draining`), no call starts, and a call refused its retry or cut
 * short waiting before its tool ran (it throws SHUTTING_DOWN) aborts no sibling: the calls running
 * go on, and when none is left the wave ends SHUTTING_DOWN, unless every call had finished.
 *
 * Each call is followed by one pair of callbacks on its promise, not an async task and a race
 * per call: a wave of eight calls measured a tenth of its allocations in those.
 */
export function runWave(deps: PipelineDeps, turn: TurnContext, entries: readonly WaveEntry[], limit: number): Promise<ToolResult[]> {
  // The wave's own abort scope: no AbortController unless an executor or hook asks for a signal.
  const scope = createAbortScope();
  const waveTurn = copyTurn(turn, scope.signal, turn.resources);
  const results = new Array<ToolResult>(entries.length);
  return new Promise<ToolResult[]>((resolve, reject) => {
    let next = 0;
    let running = 0;
    let done = 0;
    let settled = false;
    const unsubscribeScope = onAbort(scope.signal, () => fail(scope.signal.reason));
    const unsubscribeTurn = onAbort(turn.signal, () => scope.abort(HardError.cancelled()));
    function cleanUp(): void {
      settled = true;
      unsubscribeScope();
      unsubscribeTurn();
    }
    function fail(error: unknown): void {
      if (settled) return;
      cleanUp();
      scope.abort(error);
      reject(error);
    }
    function start(index: number): void {
      const { call, tracker, read } = entries[index]!;
      running++;
      tracker.observer.started?.();
      const work = executeCall(deps, waveTurn, call, tracker.observer, read);
      tracker.started(work);
      work.then(
        (result) => {
          tracker.observer.finished?.();
          tracker.finished = result;
          running--;
          if (settled) return;
          results[index] = result;
          if (++done === entries.length) {
            cleanUp();
            resolve(results);
          } else startMore();
        },
        (error: unknown) => {
          running--;
          if (error instanceof HardError && error.reason === 'SHUTTING_DOWN') startMore();
          else fail(error);
        },
      );
    }
    function startMore(): void {
      if (turn.draining?.aborted) {
        if (running === 0) fail(HardError.shuttingDown());
        return;
      }
      while (!settled && next < entries.length && running < limit) start(next++);
    }
    if (turn.signal.aborted) scope.abort(HardError.cancelled());
    if (entries.length === 0) {
      cleanUp();
      resolve(results);
    } else startMore();
  });
}
