import type { ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { HardError } from '../errors';
import type { ParallelDispatcher } from '../server';
import { trackCall } from './call-tracker';
import { answerWithin, checkMayStart, copyTurn, turnError, type TurnContext } from '../pipeline';
import { callKeys } from './call-keys';
import { planWaves, type WaveToolLookup } from './plan-waves';
import { plannedTools, type PlannedTool } from './planned-tool';
import { ResourceLocks } from './resource-locks';
import { runWave } from './run-wave';
import { resolveWaveOptions, type WaveOptions } from './wave-options';

/**
 * Longest the end of a failed turn waits for its aborted calls to end their events, in ms; its
 * TURN_END and its admission place (limits.max_turns_in_flight) wait that long at most.
 */
const UNWIND_WAIT_MS = 5_000;

/**
 * Parallel mode (DESIGN section 3): plans the turn into waves, fires CALL_RECEIVED for every call
 * before any runs, then runs the waves one after another, checking for cancellation between
 * them; once dispatchd drains, no wave starts and the turn ends SHUTTING_DOWN (see runWave).
 * Results are returned in request order. A hard error ends the turn: every call observer is
 * ended with its reason and the error is thrown, so the RPC ends with its status. The service
 * takes the sequential path for turns of fewer than two calls. A wave runs at most
 * min(calls, max_concurrency) calls at once, what the turn's admission reserved
 * (limits.max_calls_in_flight, see peakCalls); the dispatcher's `defaultMaxConcurrency` tells it.
 */
export function createParallelDispatcher(options: WaveOptions = {}): ParallelDispatcher & { readonly defaultMaxConcurrency: number } {
  const { defaultMaxConcurrency } = resolveWaveOptions(options);
  const dispatch: ParallelDispatcher = async (deps, turn, request) => {
    const { calls } = request;
    // Planned once per tool name: the calls of a turn naming one tool share its plan.
    const lookup: WaveToolLookup<PlannedTool> = plannedTools(deps, turn);
    // Calls conflict on their resource keys and loop operations (see callKeys).
    const { keyOf, loopOf, readOf } = callKeys(deps, turn.tenant);
    const waves = planWaves(calls, lookup, keyOf, loopOf);
    const trackers = calls.map((call) => trackCall(turn.observer.call({ toolCallId: call.id, tool: call.name, arguments: call.arguments, unknown: lookup(call.name) === undefined })));
    // Any uint32 is accepted; past the turn's calls it changes nothing, so it is cut there.
    const limit = Math.min(calls.length, request.maxConcurrency === 0 ? defaultMaxConcurrency : request.maxConcurrency);
    const results = new Array<ToolResult>(calls.length);
    // Calls that a policy rewrote onto another call's resource wait for it (see ResourceLocks).
    const lockedTurn = copyTurn(turn, turn.signal, new ResourceLocks());
    try {
      for (const wave of waves) {
        checkMayStart(turn);
        const entries = wave.calls.map((index) => ({ call: calls[index]!, tracker: trackers[index]!, read: readOf(calls[index]!) }));
        const waveResults = await runWave(deps, lockedTurn, entries, limit);
        wave.calls.forEach((index, k) => {
          results[index] = waveResults[k]!;
          trackers[index]!.succeed(waveResults[k]!);
        });
      }
      return results;
    } catch (error) {
      // A cancellation by the turn's deadline or by shutdown ends its calls as it ends the turn.
      const hard = turnError(error, turn.deadline, turn.shutdown, turn.received);
      const reason = hard instanceof HardError ? hard.reason : 'INTERNAL';
      const unwound = Promise.all(trackers.map((tracker) => tracker.fail(reason)));
      // The turn ends (TURN_END) and gives back its admission place after its calls' last events,
      // at most UNWIND_WAIT_MS after the RPC.
      // Named, in request order: every call that had finished, in the failing wave too (its side effects ran).
      if (hard instanceof HardError) hard.withCompleted(trackers.flatMap((t, index) => (t.finished ? [{ id: t.finished.toolCallId, index }] : []))).unwound = answerWithin(unwound, UNWIND_WAIT_MS);
      throw hard;
    }
  };
  return Object.assign(dispatch, { defaultMaxConcurrency });
}
