import type { ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { HardError } from '../errors';
import type { ParallelDispatcher } from '../server';
import { trackCall } from './call-tracker';
import { prepareArguments } from '../arguments';
import type { ResolvedTool } from '../registry';
import { answerWithin, type TurnContext } from '../pipeline';
import { planWaves, type ResourceKeyOf, type WaveToolLookup } from './plan-waves';
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

/** Longest the end of a failed turn waits for its aborted calls to end their events, in ms. */
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
    const lookup: WaveToolLookup = (name) => {
      const spec = turn.offeredTools && !turn.offeredTools.has(name) ? undefined : deps.registry.lookup(turn.tenant, name)?.spec;
      if (!spec?.concurrencySafe || spec.fallbackTool === '' || spec.fallbackTool === name) return spec;
      // A call that may fall back is planned as its fallback runs: alone unless that tool is safe too.
      const fallback = deps.registry.lookup(turn.tenant, spec.fallbackTool)?.spec;
      return !fallback || fallback.concurrencySafe ? spec : { ...spec, concurrencySafe: false };
    };
    // The key is read from the arguments as the tool receives them (parsed, repaired for a lenient
    // tool, schema defaults applied), so `"7"` and `7`, or an omitted field and its default, name
    // one resource. Only a lenient tool's or a schema with defaults can change them, so only those
    // are prepared here (the pipeline prepares them again). Arguments that fail validation never
    // run; their text's key is used.
    const keyOf: ResourceKeyOf = (call, spec) => {
      if (spec.resourceKey === '') return undefined;
      const tool = deps.registry.lookup(turn.tenant, call.name);
      if (!tool || !mayReshape(tool)) return resourceKeyOf(call.arguments, spec.resourceKey);
      try {
        return resourceKeyIn(prepareArguments(tool, call.arguments, deps.limits).args, spec.resourceKey);
      } catch {
        return resourceKeyOf(call.arguments, spec.resourceKey);
      }
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
      const reason = error instanceof HardError ? error.reason : 'INTERNAL';
      const unwound = Promise.all(trackers.map((tracker) => tracker.fail(reason)));
      // The turn ends (TURN_END) after its calls' last events, at most UNWIND_WAIT_MS after the RPC.
      if (error instanceof HardError) error.unwound = answerWithin(unwound, UNWIND_WAIT_MS);
      throw error;
    }
  };
}
