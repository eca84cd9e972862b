import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError, HardError } from '../errors';
import { breakerKey, onAbort, type Release, type ToolSlots, type TurnSignal } from '../pipeline';
import { globAny } from './glob';
import type { ConcurrencyPolicy } from './policy-types';

/** Tool names whose cap (or lack of one) is remembered; past it the memo starts again. */
const MAX_REMEMBERED_TOOLS = 10_000;

/** One tool's slots: how many are taken, and the attempts waiting for one, first in line first. */
interface ToolState {
  taken: number;
  readonly waiting: Array<(release: Release) => void>;
}

function refusal(tool: string, policy: ConcurrencyPolicy, waited: number): DispatchError {
  const limit = `its limit of ${policy.maxInFlight} call${policy.maxInFlight === 1 ? '' : 's'} running at once on this dispatch replica`;
  const message = waited > 0 ? `tool "${tool}" stayed at ${limit} for ${waited} ms; this call was not executed` : `tool "${tool}" is at ${limit}; this call was not executed`;
  return new DispatchError(ErrorKind.UNAVAILABLE, message, { phase: 'before', recoverable: true, suggestion: 'Call it again in a moment, or do something else first.' });
}

/**
 * Concurrency caps from the `concurrency:` policies: per tool (per tenant for a tool a tenant
 * registered, as its breaker) and per replica, at most `max_in_flight` attempts run at once; the
 * next waits up to `wait_ms` (and its deadline) for one to end, first come first served, and is
 * refused UNAVAILABLE before execution when none does. Undefined when there are no caps, so the
 * pipeline asks nothing per attempt.
 */
export function createToolSlots(policies: readonly ConcurrencyPolicy[]): ToolSlots | undefined {
  if (policies.length === 0) return undefined;
  const policyOf = new Map<string, ConcurrencyPolicy | null>();
  const states = new Map<string, ToolState>();

  function capOf(name: string): ConcurrencyPolicy | undefined {
    let policy = policyOf.get(name);
    if (policy === undefined) {
      if (policyOf.size >= MAX_REMEMBERED_TOOLS) policyOf.clear();
      policyOf.set(name, (policy = policies.find((p) => globAny(p.match, name)) ?? null));
    }
    return policy ?? undefined;
  }

  /** The release of a slot of `key`: hands it to the first waiter, or frees it; a second call does nothing. */
  function releaser(key: string, state: ToolState): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = state.waiting.shift();
      if (next) next(releaser(key, state));
      else if (--state.taken === 0) states.delete(key);
    };
  }

  return {
    take(tool, signal: TurnSignal, deadline) {
      const policy = capOf(tool.name);
      if (!policy) return undefined;
      const key = breakerKey(tool);
      let state = states.get(key);
      if (!state) states.set(key, (state = { taken: 0, waiting: [] }));
      if (state.taken < policy.maxInFlight) {
        state.taken++;
        return releaser(key, state);
      }
      const waitMs = Math.min(policy.waitMs, deadline - Date.now());
      if (!(waitMs > 0)) throw refusal(tool.name, policy, 0);
      if (signal.aborted) throw HardError.cancelled();
      const queue = state.waiting;
      return new Promise<Release>((resolve, reject) => {
        const leave = () => {
          clearTimeout(timer);
          stopWatching();
          const at = queue.indexOf(grant);
          if (at !== -1) queue.splice(at, 1);
        };
        const grant = (release: Release) => {
          leave();
          resolve(release);
        };
        const timer = setTimeout(() => {
          leave();
          reject(refusal(tool.name, policy, waitMs));
        }, waitMs);
        const stopWatching = onAbort(signal, () => {
          leave();
          reject(HardError.cancelled());
        });
        queue.push(grant);
      });
    },
    inUse() {
      const taken = new Map<string, number>();
      for (const [key, state] of states) taken.set(key, state.taken);
      return taken;
    },
  };
}
