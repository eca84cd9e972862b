import type { ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { HardError } from '../errors';
import type { ParallelDispatcher } from '../server';
import { trackCall } from './call-tracker';
import { prepareArguments } from '../arguments';
import type { ResolvedTool } from '../registry';
import { answerWithin, turnError, type TurnContext } from '../pipeline';
import { planWaves, type ResourceKeyOf, type WaveToolLookup } from './plan-waves';
import { plannedTools, type PlannedTool } from './planned-tool';
import { resourceKeyIn, resourceKeyOf } from './resource-key';
import { ResourceLocks } from './resource-locks';
import { runWave } from './run-wave';
import { resolveWaveOptions, type WaveOptions } from './wave-options';

const reshapes = new WeakMap<ResolvedTool, boolean>();

/** Whether preparing a tool's arguments can change their values: lenient repair, or schema defaults. */
function mayReshape(tool: ResolvedTool): boolean {
  let known = reshapes.get(tool);
  if (known === undefined) reshapes.set(tool, (known = tool.spec.lenientArguments || JSON.stringify(tool.schema).includes('"default"')));
  return known;
}

/**
 * Longest the end of a failed turn waits for its aborted calls to end their events, in ms; its
 * TURN_END and its admission place (limits.max_turns_in_flight) wait that long at most.
 */
const UNWIND_WAIT_MS = 5_000;

/**
 * Parallel mode (DESIGN section 3): plans the turn into waves, fires CALL_RECEIVED for every call
 * before any runs, then runs the waves one after another, checking for cancellation between
 * them. Results are returned in request order. A hard error ends the turn: every call observer is
 * ended with its reason and the error is thrown, so the RPC ends with its status. The service
 * takes the sequential path for turns of fewer than two calls.
 */
export function createParallelDispatcher(options: WaveOptions = {}): ParallelDispatcher {
  const { defaultMaxConcurrency } = resolveWaveOptions(options);
  return async (deps, turn, request) => {
    const { calls } = request;
    // Planned once per tool name: the calls of a turn naming one tool share its plan.
    const lookup: WaveToolLookup<PlannedTool> = plannedTools(deps, turn);
    // The key is read from the arguments as the tool receives them (parsed, repaired for a lenient
    // tool, schema defaults applied), so `"7"` and `7`, or an omitted field and its default, name
    // one resource. Only a lenient tool's or a schema with defaults can change them, so only those
    // are prepared here (the pipeline prepares them again). Arguments that fail validation never
    // run; their text's key is used. A fallback receives the arguments as the call's tool left them.
    const keyOf: ResourceKeyOf<PlannedTool> = (call, planned) => {
      if (planned.pointers.length === 0) return undefined;
      const tool = planned.tools[0]!;
      let args: unknown;
      try {
        args = mayReshape(tool) ? prepareArguments(tool, call.arguments, deps.limits).args : JSON.parse(call.arguments);
      } catch {
        args = undefined;
      }
      const keyFor = (pointer: string) => (args === undefined ? resourceKeyOf(call.arguments, pointer) : resourceKeyIn(args, pointer));
      if (planned.pointers.length === 1) return keyFor(planned.pointers[0]!);
      const keys = new Set<string>();
      for (const pointer of planned.pointers) {
        const key = keyFor(pointer);
        if (key !== undefined) keys.add(key);
      }
      return [...keys];
    };
    const waves = planWaves(calls, lookup, keyOf);
    const trackers = calls.map((call) => trackCall(turn.observer.call({ toolCallId: call.id, tool: call.name, arguments: call.arguments })));
    const limit = request.maxConcurrency === 0 ? defaultMaxConcurrency : request.maxConcurrency;
    const results = new Array<ToolResult>(calls.length);
    // Calls that a policy rewrote onto another call's resource wait for it (see ResourceLocks).
    const lockedTurn: TurnContext = { ...turn, resources: new ResourceLocks() };
    try {
      for (const wave of waves) {
        if (turn.signal.aborted) throw HardError.cancelled();
        const entries = wave.calls.map((index) => ({ call: calls[index]!, tracker: trackers[index]! }));
        const waveResults = await runWave(deps, lockedTurn, entries, limit);
        wave.calls.forEach((index, k) => {
          results[index] = waveResults[k]!;
          trackers[index]!.succeed(waveResults[k]!);
        });
      }
      return results;
    } catch (error) {
      // A cancellation by the turn's deadline ends its calls DEADLINE_EXCEEDED, as it ends the turn.
      const hard = turnError(error, turn.deadline);
      const reason = hard instanceof HardError ? hard.reason : 'INTERNAL';
      const unwound = Promise.all(trackers.map((tracker) => tracker.fail(reason)));
      // The turn ends (TURN_END) and gives back its admission place after its calls' last events,
      // at most UNWIND_WAIT_MS after the RPC.
      if (hard instanceof HardError) hard.unwound = answerWithin(unwound, UNWIND_WAIT_MS);
      throw hard;
    }
  };
}
