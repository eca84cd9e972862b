import { EventKind } from '../../gen/dispatch/v1/dispatch_pb';
import type { EventBus } from './event-bus';
import type { TenantSequence } from './relay-codec';

/** Sending replicas whose sequences a receiving relay keeps; past it, the one heard from least recently is forgotten. */
export const MAX_SEQUENCED_ORIGINS = 256;
/** A sending replica not heard from for this long is forgotten (replicas come and go). */
export const SEQUENCED_ORIGIN_TTL_MS = 10 * 60_000;

/** What a receiving relay knows of one sending replica's events, per tenant. */
interface SeenOrigin {
  /** When its last batch arrived (performance.now()). */
  at: number;
  /** Per tenant: events the sender had published up to the end of the last batch received, and when it arrived. */
  readonly next: Map<string, { readonly count: number; readonly at: number }>;
}

/** Where each sending replica's sequences stand at a receiving relay (see createRedisRelay). */
export interface ReceivedSequences {
  /**
   * Counts what a batch's sequences show this replica missed of `origin`'s events, and remembers
   * where they stand. Gives the tenants whose events and losses in this batch come after later
   * ones (a batch that was overtaken): they were counted missed then, and are not applied now.
   */
  countMissed(origin: string, sequences: readonly TenantSequence[]): Set<string> | undefined;
  /** Forgets every sender: what they sent while no one here listened was lost to no one. */
  clear(): void;
}

/** Sequences of at most MAX_SEQUENCED_ORIGINS senders, `maxTenants` tenants each; gaps are reported to `bus`. */
export function createReceivedSequences(bus: EventBus, maxTenants: number): ReceivedSequences {
  // Per sending replica, least recently heard first.
  const seen = new Map<string, SeenOrigin>();
  return {
    countMissed(origin, sequences) {
      const now = performance.now();
      let known = seen.get(origin);
      if (known) seen.delete(origin);
      else known = { at: now, next: new Map() };
      for (const [oldest, { at }] of seen) {
        if (seen.size < MAX_SEQUENCED_ORIGINS && now - at < SEQUENCED_ORIGIN_TTL_MS) break;
        seen.delete(oldest);
      }
      known.at = now;
      seen.set(origin, known);
      let overtaken: Set<string> | undefined;
      for (const { tenant, before, count } of sequences) {
        const last = known.next.get(tenant);
        if (last === undefined && known.next.size >= maxTenants) continue;
        // The missing events were published after the last batch that arrived: a subscriber that
        // joined since may not have missed them, and is not charged.
        if (last !== undefined && before > last.count) bus.reportLost(tenant, { sessionId: '', tool: '', kind: EventKind.UNSPECIFIED, count: before - last.count }, last.at);
        if (last !== undefined && before < last.count) (overtaken ??= new Set()).add(tenant);
        known.next.set(tenant, { count: Math.max(last?.count ?? 0, before + count), at: now });
      }
      return overtaken;
    },
    clear: () => seen.clear(),
  };
}
