import { randomBytes } from 'node:crypto';
import { HardError, type DispatchError } from '../errors';
import { throttledWarn, type Logger } from '../log';
import { breakerKey, callBreakerKey, type Release, type SlotTool, type ToolSlots, type TurnSignal } from '../pipeline';
import { defineSlotScript, hashTag, storeCall, type RedisClient } from '../store/redis';
import { countUnder, MAX_COUNTED_KEYS } from './bounded-counts';
import { firstMatching } from './glob';
import { createLocalSlots } from './local-slots';
import type { ConcurrencyPolicy } from './policy-types';
import { closedSlotRefusal, slotRefusal, type SlotBound } from './slot-refusal';
import { SlotWaiter, type SlotWakeups } from './slot-wakeups';

/** A shared slot's lease beyond the tool's timeout: a replica that died holding it frees it then. */
const LEASE_MARGIN_MS = 5_000;
/** First and longest pause between two tries for a shared slot, in ms; a release elsewhere ends a pause at once (with wakeups). */
const FIRST_RETRY_MS = 25;
const MAX_RETRY_MS = 200;
/** The longest pause when releases wake the waiters: the timer then only finds leases that ran out and wakeups that were lost. */
const MAX_RETRY_WITH_WAKEUPS_MS = 1_000;

/** Where shared caps keep their slots. */
export interface SharedSlotsOptions {
  /** A connection that fails fast while Redis is away (not one that queues). */
  readonly redis: RedisClient;
  /** Time one Redis step may take, in ms. @default 1000 */
  readonly timeoutMs?: number;
  /** Wakes a waiting call when another replica gives a slot back; without it, waiting calls only try again every 25-200 ms. */
  readonly wakeups?: SlotWakeups;
  readonly logger?: Logger;
}

/**
 * How long a call waiting for a shared slot keeps its place in line without trying again, in ms:
 * it tries at least every MAX_RETRY_WITH_WAKEUPS_MS, so only a call whose replica died loses it,
 * holding up the calls behind it that long at most.
 */
const KEEP_IN_LINE_MS = 3_000;

/** take-slot.lua's answers: a slot taken; none (the tool's slots, or those of the calls ahead in line); none for the tenant (its share held). */
const SLOT_TAKEN = 1;
const SHARE_FULL = 2;
type SlotAnswer = 0 | typeof SLOT_TAKEN | typeof SHARE_FULL;

/** The Redis keys of a tool's shared slots (one hash tag, hence one Cluster slot) and the channel of its releases. */
interface SharedSlotKeys {
  readonly slots: string;
  readonly line: string;
  readonly alive: string;
  readonly tickets: string;
  readonly channel: string;
}

function sharedSlotKeys(key: string): SharedSlotKeys {
  return { slots: key, line: `${key}:line`, alive: `${key}:alive`, tickets: `${key}:tickets`, channel: `${key}:free` };
}

/** Lease ids: unique across replicas (a random prefix per process, then a count). */
const LEASE_PREFIX = randomBytes(9).toString('base64url');
let leases = 0;

/**
 * Concurrency caps from the `concurrency:` policies: per tool (per tenant for a tool a tenant
 * registered, as its breaker) and per replica, at most `max_in_flight` attempts run at once, and
 * under `max_in_flight_per_tenant` at most that many of one calling tenant (`caller`; a waiting
 * attempt whose tenant holds its share never holds up another tenant's: local-slots.ts); the
 * next waits up to `wait_ms` (and its deadline) for one to end, first come first served, and is
 * refused UNAVAILABLE before execution when none does. Undefined when there are no caps, so the
 * pipeline asks nothing per attempt. With `shared`, a `shared: true` cap holds for every replica
 * together: its slots are leases in Redis (take-slot.lua; a lease lasts the tool's timeout plus a
 * margin, plus the attempt's longest rate wait: `holdMs`), waiting attempts are served first come
 * first served across replicas (a line in Redis, see take-slot.lua, which counts the tool's
 * leases and the caller's tenant's in the same step), a waiting attempt tries again as soon as any replica gives a slot back
 * (release-slot.lua publishes it; with `wakeups`) and on a timer besides (25 ms doubling to 1 s,
 * or to 200 ms without wakeups), and while Redis fails the cap falls back to this replica's own
 * slots (or its fallback_max_in_flight, or refuses: fail_closed).
 */
export function createToolSlots(policies: readonly ConcurrencyPolicy[], shared?: SharedSlotsOptions): ToolSlots | undefined {
  if (policies.length === 0) return undefined;
  if (shared) defineSlotScript(shared.redis);
  const warn = throttledWarn(shared?.logger);
  const local = createLocalSlots();
  /** Shared slots this replica holds now, by breaker key (for the in-flight gauge). */
  const sharedTaken = new Map<string, number>();
  /** Attempts refused so far, by breaker key (for the refusals counter; bounded, see countUnder). */
  const refusals = new Map<string, number>();
  /** Keys that took a slot since the start, shown at 0 once idle (bounded as the refusals' keys). */
  const everTaken = new Set<string>();
  const noteTaken = (key: string) => {
    if (everTaken.size < MAX_COUNTED_KEYS) everTaken.add(key);
  };

  /**
   * Counts the refusal of an attempt of `tool` by `caller` and makes its error (the bound found
   * full named): one refused for its tenant's share counts under the caller's key of the tool
   * (callBreakerKey), so the refusals counter's `tenant` says whose share it was.
   */
  function refusal(tool: SlotTool, caller: string, policy: ConcurrencyPolicy, waited: number, everywhere: boolean, bound: SlotBound): DispatchError {
    countUnder(refusals, bound === 'tenant' ? callBreakerKey(caller, tool) : breakerKey(tool));
    return slotRefusal(tool, policy, waited, everywhere, bound);
  }

  /** What a shared cap is per replica while Redis fails: its fallback_max_in_flight (by default, its max_in_flight), a tenant's share within it. */
  const fallbacks = new WeakMap<ConcurrencyPolicy, ConcurrencyPolicy>();
  function fallbackOf(policy: ConcurrencyPolicy): ConcurrencyPolicy {
    if (policy.fallbackMaxInFlight === policy.maxInFlight) return policy;
    let fallback = fallbacks.get(policy);
    const share = policy.maxInFlightPerTenant;
    if (!fallback) fallbacks.set(policy, (fallback = { ...policy, maxInFlight: policy.fallbackMaxInFlight, ...(share !== undefined && { maxInFlightPerTenant: Math.min(share, policy.fallbackMaxInFlight) }) }));
    return fallback;
  }

  const capOf = firstMatching(policies);

  function takeLocal(tool: SlotTool, caller: string, policy: ConcurrencyPolicy, signal: TurnSignal, deadline: number): Release | Promise<Release> {
    const key = breakerKey(tool);
    const taken = local.take(key, caller, policy, signal, deadline, (bound, waited) => refusal(tool, caller, policy, waited, false, bound));
    noteTaken(key);
    return taken;
  }

  /** A slot of a cap shared through Redis, tried until the wait allows no more; the local cap while Redis fails. */
  async function takeShared(backend: SharedSlotsOptions, tool: SlotTool, caller: string, policy: ConcurrencyPolicy, signal: TurnSignal, deadline: number, holdMs: number): Promise<Release> {
    const key = `dispatch:slots:${hashTag(breakerKey(tool))}`;
    const share = policy.maxInFlightPerTenant ?? 0;
    // Under a tenant's share, the lease names its tenant (after '|'; the prefix is base64url): take-slot.lua counts each tenant's leases.
    const lease = `${LEASE_PREFIX}${(++leases).toString(36)}${share > 0 ? `|${caller}` : ''}`;
    const asked = Date.now();
    const until = Math.min(asked + policy.waitMs, deadline);
    const timeoutMs = backend.timeoutMs ?? 1000;
    const slotKeys = sharedSlotKeys(key);
    const waiter = new SlotWaiter(signal);
    const maxPause = backend.wakeups ? MAX_RETRY_WITH_WAKEUPS_MS : MAX_RETRY_MS;
    // The lease covers the attempt's wait before its tool starts (a rate turn), then the tool's timeout.
    const leaseMs = Math.ceil(holdMs) + tool.timeoutMs + LEASE_MARGIN_MS;
    /** This call may hold a lease or a place in line in Redis, to give back when it stops trying. */
    let inRedis = false;
    /** It joined the line (a try that may wait): a last try that may not leaves it there, to be given back too. */
    let inLine = false;
    try {
      for (let pause = FIRST_RETRY_MS; ; pause = Math.min(pause * 2, maxPause)) {
        let taken: SlotAnswer;
        // A call that may wait after this try joins the line (or keeps its place) when no slot is its.
        const waits = until - Date.now() > 0 ? 1 : 0;
        // A try whose answer is lost (Redis slow past the timeout) may still have taken a lease or
        // joined the line: given back in `finally` as if it had.
        inRedis = true;
        try {
          taken = await storeCall('a shared slot', timeoutMs, () => backend.redis.dispatchTakeSlot(slotKeys.slots, slotKeys.line, slotKeys.alive, slotKeys.tickets, policy.maxInFlight, leaseMs, lease, waits, KEEP_IN_LINE_MS, share));
        } catch (error) {
          if (policy.failClosed) {
            warn('shared concurrency caps: redis failed, calls of fail_closed caps are refused', { tool: tool.name, error: (error as Error).message });
            countUnder(refusals, breakerKey(tool));
            throw closedSlotRefusal(tool);
          }
          warn("shared concurrency caps: redis failed, this replica's own slots apply", { tool: tool.name, error: (error as Error).message });
          // What is left of its wait, not a new one.
          return takeLocal(tool, caller, fallbackOf(policy), signal, until);
        }
        if (taken === SLOT_TAKEN) {
          inRedis = false;
          const release = sharedRelease(backend, tool, slotKeys, lease);
          if (!signal.aborted) return release;
          release();
          throw HardError.cancelled();
        }
        inLine ||= waits === 1;
        inRedis = inLine;
        if (signal.aborted) throw HardError.cancelled();
        const left = until - Date.now();
        if (left <= 0) throw refusal(tool, caller, policy, Math.max(0, until - asked), true, taken === SHARE_FULL ? 'tenant' : 'tool');
        // Listening from the first refusal on: a release from now on ends the pause. The last
        // pause ends at the end of the wait, for one last try.
        waiter.listen(backend.wakeups, slotKeys.channel);
        await waiter.pause(Math.min(pause, left));
      }
    } finally {
      waiter.stop();
      // A call that stops waiting leaves the line (else its place lapses KEEP_IN_LINE_MS later).
      if (inRedis) backend.redis.dispatchReleaseSlot(slotKeys.slots, slotKeys.line, slotKeys.alive, lease, slotKeys.channel).catch(() => undefined);
    }
  }

  /** The release of a shared slot this replica took: the lease is given back and the waiters told. */
  function sharedRelease(backend: SharedSlotsOptions, tool: SlotTool, keys: SharedSlotKeys, lease: string): Release {
    const local = breakerKey(tool);
    sharedTaken.set(local, (sharedTaken.get(local) ?? 0) + 1);
    noteTaken(local);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = sharedTaken.get(local)! - 1;
      if (left === 0) sharedTaken.delete(local);
      else sharedTaken.set(local, left);
      // A release that fails leaves the slot to its lease.
      backend.redis.dispatchReleaseSlot(keys.slots, keys.line, keys.alive, lease, keys.channel).catch(() => undefined);
    };
  }

  return {
    take(tool, signal: TurnSignal, deadline, holdMs = 0, caller = tool.tenant) {
      const policy = capOf(tool.name);
      if (!policy) return undefined;
      return policy.shared && shared ? takeShared(shared, tool, caller, policy, signal, deadline, holdMs) : takeLocal(tool, caller, policy, signal, deadline);
    },
    refused: () => refusals,
    inUse() {
      const taken = new Map<string, number>();
      for (const key of everTaken) taken.set(key, 0);
      for (const [key, count] of sharedTaken) taken.set(key, count);
      local.addInUse(taken);
      return taken;
    },
  };
}
