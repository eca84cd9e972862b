import type { ExecutorContext } from '../executor';

/** How long an attempt that reached a worker is remembered for the call's next attempt, in ms (its backoff is shorter). */
const REMEMBER_MS = 60_000;
/** At most this many calls are remembered (the oldest are forgotten first). */
const MAX_REMEMBERED = 4_096;

/**
 * The read-only calls one of whose attempts was sent to a worker (here, or through the relay) and
 * failed while it ran: their next attempt, finding no worker, must not say the call was not
 * executed (the earlier attempt may have run). Kept per call (tenant, session, call id, key)
 * with the attempt it holds for, so that only the call's next attempt finds it; bounded in time
 * and count, as a call not retried is never asked about again.
 */
export interface ReachedCalls {
  /** Records that the attempt `ctx` names reached a worker, or follows one that did. */
  remember(tenant: string, ctx: ExecutorContext): void;
  /** Whether an earlier attempt of the call `ctx` names reached a worker; forgets it (remember() carries it on). */
  take(tenant: string, ctx: ExecutorContext): boolean;
}

interface Reached {
  readonly attempt: number;
  readonly until: number;
}

/** Creates an empty record (one per worker executor). */
export function createReachedCalls(): ReachedCalls {
  const calls = new Map<string, Reached>();
  const keyOf = (tenant: string, ctx: ExecutorContext) => `${tenant}\n${ctx.sessionId}\n${ctx.toolCallId}\n${ctx.idempotencyKey}`;
  return {
    remember(tenant, ctx) {
      const key = keyOf(tenant, ctx);
      const now = Date.now();
      // Re-inserted, so that the map stays in the order entries expire.
      calls.delete(key);
      calls.set(key, { attempt: ctx.attempt, until: now + REMEMBER_MS });
      for (const [oldest, entry] of calls) {
        if (calls.size <= MAX_REMEMBERED && entry.until > now) break;
        calls.delete(oldest);
      }
    },
    take(tenant, ctx) {
      const key = keyOf(tenant, ctx);
      const entry = calls.get(key);
      if (!entry) return false;
      calls.delete(key);
      return entry.attempt === ctx.attempt - 1 && entry.until > Date.now();
    },
  };
}
