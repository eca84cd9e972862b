import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError } from '../errors';
import { TOOL_DEFAULTS } from '../options';
import type { SlotTool } from '../pipeline';
import type { ConcurrencyPolicy } from './policy-types';

/**
 * Which bound of a cap an attempt found full: the tool's limit for all tenants together
 * (`max_in_flight`), or its calling tenant's share of it (`max_in_flight_per_tenant`).
 */
export type SlotBound = 'tool' | 'tenant';

/**
 * What a refused attempt is told: call again after the tool's `loop.assumed_wait_ms` (1 s unless
 * set), as `retry_after_ms` and in the suggestion. When a slot frees is not known (a call holding
 * one ends when its tool answers), so the cap tells the wait any failure asking to be called again
 * later without saying when is taken to have told (README, Guards; docs/policies.md, Loop
 * detection): before, it told none, though the README promised one, and loop detection assumed it
 * unseen. The retry policy waits it too (its own backoff if longer).
 */
function againLater(tool: SlotTool): { readonly retryAfterMs: number; readonly suggestion: string } {
  const retryAfterMs = tool.loop?.assumedWaitMs ?? TOOL_DEFAULTS.assumedWaitMs;
  return { retryAfterMs, suggestion: `Call it again in ${retryAfterMs} ms or later, or do something else first.` };
}

const calls = (n: number) => `${n} call${n === 1 ? '' : 's'}`;

/**
 * The refusal of an attempt that got no slot, naming the bound it found full (`bound`);
 * `everywhere` when the slots it asked for were the shared ones. A tenant's share is named as
 * such, with the tool's limit beside it: the tool itself may have slots free for other tenants.
 */
export function slotRefusal(tool: SlotTool, policy: ConcurrencyPolicy, waited: number, everywhere: boolean, bound: SlotBound): DispatchError {
  const where = everywhere ? 'on all dispatch replicas together' : 'on this dispatch replica';
  const limit =
    bound === 'tenant'
      ? `this tenant's share of ${calls(policy.maxInFlightPerTenant!)} running at once ${where} (max_in_flight_per_tenant; its limit for all tenants together is ${policy.maxInFlight})`
      : `its limit of ${calls(policy.maxInFlight)} running at once ${where}`;
  const message = waited > 0 ? `tool "${tool.name}" stayed at ${limit} for ${waited} ms; this call was not executed` : `tool "${tool.name}" is at ${limit}; this call was not executed`;
  return new DispatchError(ErrorKind.UNAVAILABLE, message, { phase: 'before', recoverable: true, ...againLater(tool) });
}

/** The refusal of an attempt of a `fail_closed` shared cap while Redis fails. */
export function closedSlotRefusal(tool: SlotTool): DispatchError {
  return new DispatchError(ErrorKind.UNAVAILABLE, `tool "${tool.name}" has a concurrency cap shared by all dispatch replicas through Redis, which is failing, and the cap is fail_closed; this call was not executed`, { phase: 'before', recoverable: true, ...againLater(tool) });
}
