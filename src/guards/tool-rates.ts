import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError, HardError } from '../errors';
import { throttledWarn } from '../log';
import { breakerKey, callBreakerKey, delay, type SlotTool, type ToolRates, type TurnSignal } from '../pipeline';
import { defineSlotScript, hashTag, storeCall } from '../store/redis';
import { countUnder } from './bounded-counts';
import { firstMatching } from './glob';
import { createToldTurns } from './told-turns';
import { trimLimits } from './trim-limits';
import type { RatePolicy } from './policy-types';
import type { SharedSlotsOptions } from './tool-slots';

/** Local limits kept; past it, room is made fairly between tenants (trim-limits.ts). */
const MAX_LOCAL_LIMITS = 10_000;

/** A policy's limit as GCRA reads it: the time between two turns and the burst's tolerance, in ms. */
interface Cadence {
  readonly intervalMs: number;
  readonly toleranceMs: number;
}

/** How long an attempt may wait for its turn now: the limit's `wait_ms`, within its deadline (epoch ms). */
const allowedWait = (policy: RatePolicy, deadline: number) => Math.max(0, Math.min(policy.waitMs, deadline - Date.now()));

function cadenceOf(policy: RatePolicy): Cadence {
  const intervalMs = 1000 / policy.perSecond;
  return { intervalMs, toleranceMs: (policy.burst - 1) * intervalMs };
}

/**
 * Rate limits from the `rate:` policies: per tool (per tenant for a tool a tenant registered, as
 * its breaker, and per calling tenant for a `per_tenant` limit), attempts start at most `per_second` on average, `burst` at once after a quiet
 * spell. An attempt whose turn is further away than the limit's `wait_ms` (and its deadline)
 * allows is refused UNAVAILABLE before execution with `retry_after_ms` set to when its turn would
 * come, after the turns of the calls refused before it that were told to come back first
 * (told-turns.ts; the retry policy waits at least that long); one within it waits for its turn,
 * and gives it back if its client cancels meanwhile and it is still the last turn queued. The
 * limit is GCRA, a token bucket kept as one time. With `shared: true` and Redis, every replica
 * shares the limit (take-turn.lua, one round trip per attempt, Redis's clock, which keeps the times
 * told to refused calls too; give-turn.lua gives back a turn given up while waiting); while Redis
 * fails, each replica applies it alone. Undefined when there are no limits, so the pipeline asks
 * nothing per attempt.
 */
export function createToolRates(policies: readonly RatePolicy[], shared?: SharedSlotsOptions): ToolRates | undefined {
  if (policies.length === 0) return undefined;
  if (shared) defineSlotScript(shared.redis);
  const warn = throttledWarn(shared?.logger);
  const cadences = new Map<RatePolicy, Cadence>(policies.map((p) => [p, cadenceOf(p)]));
  /** Each locally limited tool's time at which its limit is back to empty (performance.now() ms). */
  const emptyAt = new Map<string, number>();
  const refusals = new Map<string, number>();
  const toldTurns = createToldTurns();

  const limitOf = firstMatching(policies);

  /**
   * The refusal of an attempt whose limit's next turn is `waitMs` away, told to come back in
   * `toldMs` (later than `waitMs` when calls refused before it were told to come back first).
   */
  function refusal(tool: SlotTool, key: string, policy: RatePolicy, waitMs: number, toldMs: number, allowedMs: number, everywhere: boolean): DispatchError {
    countUnder(refusals, key);
    const next = Math.ceil(waitMs);
    const told = Math.max(next, Math.ceil(toldMs));
    const where = `${policy.perTenant ? 'for this tenant ' : ''}${everywhere ? 'on all dispatch replicas together' : 'on this dispatch replica'}`;
    const within = policy.waitMs > 0 ? `, past the ${Math.max(0, Math.floor(allowedMs))} ms it may wait` : '';
    const ahead = Math.max(1, Math.round((told - next) / cadences.get(policy)!.intervalMs));
    const queued = told > next ? `, and ${ahead === 1 ? '1 call' : `${ahead} calls`} refused before this one ${ahead === 1 ? 'was' : 'were'} told to come back first: this one's turn is in ${told} ms at the earliest` : '';
    return new DispatchError(ErrorKind.UNAVAILABLE, `tool "${tool.name}" is at its rate limit of ${policy.text} (burst ${policy.burst}) ${where}; its next turn is in ${next} ms${within}${queued}; this call was not executed`, {
      phase: 'before',
      recoverable: true,
      retryAfterMs: told,
      suggestion: `Call it again in ${told} ms or later, or do something else first.`,
    });
  }

  /** Waits `ms` for a turn taken, under `signal`; `giveBack` returns it when the client cancels first. */
  function waitTurn(ms: number, signal: TurnSignal, giveBack?: () => void): Promise<void> {
    return delay(ms, signal).catch(() => {
      giveBack?.();
      throw HardError.cancelled();
    });
  }

  function takeLocal(tool: SlotTool, key: string, policy: RatePolicy, signal: TurnSignal, deadline: number): undefined | Promise<void> {
    if (signal.aborted) throw HardError.cancelled();
    const { intervalMs, toleranceMs } = cadences.get(policy)!;
    const now = performance.now();
    const held = emptyAt.get(key);
    const at = Math.max(held ?? now, now);
    const waitMs = at - toleranceMs - now;
    if (waitMs > 0) {
      const allowedMs = allowedWait(policy, deadline);
      if (waitMs > allowedMs) throw refusal(tool, key, policy, waitMs, toldTurns.tell(key, now, now + waitMs, intervalMs) - now, allowedMs, false);
    }
    // One lookup per attempt: a pass over the limits only for a tool new to them, at the bound.
    if (held === undefined && emptyAt.size >= MAX_LOCAL_LIMITS) trimLimits(emptyAt, now, MAX_LOCAL_LIMITS);
    const after = at + intervalMs;
    emptyAt.set(key, after);
    // Given back only while it is the last turn queued: moved back under a later one, the next turn
    // taken would start with that one, at the same time.
    return waitMs > 0 ? waitTurn(waitMs, signal, () => void (emptyAt.get(key) === after && emptyAt.set(key, at))) : undefined;
  }

  async function takeShared(backend: SharedSlotsOptions, tool: SlotTool, limitKey: string, policy: RatePolicy, signal: TurnSignal, deadline: number): Promise<void> {
    const { intervalMs, toleranceMs } = cadences.get(policy)!;
    const allowedMs = allowedWait(policy, deadline);
    const key = `dispatch:rate:${hashTag(limitKey)}`;
    const toldKey = `${key}:told`;
    let waitMs: number;
    let setAt: string;
    let nextMs: number | undefined;
    try {
      [waitMs, setAt, nextMs] = await storeCall('a shared rate turn', backend.timeoutMs ?? 1000, () => backend.redis.dispatchTakeTurn(key, toldKey, intervalMs, toleranceMs, Math.floor(allowedMs)));
    } catch (error) {
      warn("shared rate limits: redis failed, this replica's own limit applies", { tool: tool.name, error: (error as Error).message });
      return takeLocal(tool, limitKey, policy, signal, deadline);
    }
    if (waitMs < 0) throw refusal(tool, limitKey, policy, nextMs ?? -1 - waitMs, -1 - waitMs, allowedMs, true);
    // A turn given up is given back (best effort: one that fails stays spent), also when the client
    // cancelled while Redis answered, if it is still the last one queued: give-turn.lua knows it by
    // the limit's time it set, as the local give-back does.
    const giveBack = () => void backend.redis.dispatchGiveTurn(key, intervalMs, setAt).catch(() => undefined);
    if (signal.aborted) {
      giveBack();
      throw HardError.cancelled();
    }
    if (waitMs > 0) await waitTurn(waitMs, signal, giveBack);
  }

  return {
    take(tool, signal, deadline, caller = tool.tenant) {
      const policy = limitOf(tool.name);
      if (!policy) return undefined;
      // A `per_tenant` limit is the calling tenant's own (kept, bounded and trimmed as a tenant's own tool's).
      const key = policy.perTenant ? callBreakerKey(caller, tool) : breakerKey(tool);
      return policy.shared && shared ? takeShared(shared, tool, key, policy, signal, deadline) : takeLocal(tool, key, policy, signal, deadline);
    },
    longestWait(tool, deadline) {
      const policy = limitOf(tool.name);
      return policy ? allowedWait(policy, deadline) : 0;
    },
    refused: () => refusals,
  };
}
