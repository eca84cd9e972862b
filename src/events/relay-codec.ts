import { fromBinary, toBinary } from '@bufbuild/protobuf';
import { EventSchema, type Event } from '../../gen/dispatch/v1/dispatch_pb';
import type { LostEvents } from './event-bus';

/** An event with the tenant it belongs to, as it crosses replicas. */
export interface TenantEvent {
  readonly tenant: string;
  readonly event: Event;
}

/** Events of a tenant that a replica could not send, summarised (see EventBus.reportLost). */
export interface TenantLoss extends LostEvents {
  readonly tenant: string;
}

/**
 * Where a batch's events of one tenant stand in the sending replica's stream of that tenant: how
 * many it published before them, and how many it is sending now (its events and the events its
 * loss summaries of the tenant count; replicas of the previous version count its events alone).
 * A receiver that finds more published before a batch than it received missed the difference
 * (see the relay).
 */
export interface TenantSequence {
  readonly tenant: string;
  readonly before: number;
  readonly count: number;
}

interface WireBatch {
  /** The replica that sent it. */
  readonly o: string;
  /** [tenant, base64 of the binary Event] */
  readonly e: readonly (readonly [string, string])[];
  /** Events lost before this batch: [tenant, session, tool, kind, count]. */
  readonly l?: readonly (readonly [string, string, string, number, number])[];
  /** Sequences of the batch's tenants: [tenant, before, count]; absent from older replicas. */
  readonly s?: readonly (readonly [string, number, number])[];
}

/** One Redis message carrying a batch of events from replica `origin`, and what it lost before them. */
export function encodeBatch(origin: string, events: readonly TenantEvent[], losses: readonly TenantLoss[] = [], sequences: readonly TenantSequence[] = []): string {
  const wire: WireBatch = {
    o: origin,
    e: events.map(({ tenant, event }) => [tenant, Buffer.from(toBinary(EventSchema, event)).toString('base64')] as const),
    ...(losses.length > 0 ? { l: losses.map((x) => [x.tenant, x.sessionId, x.tool, x.kind, x.count] as const) } : {}),
    ...(sequences.length > 0 ? { s: sequences.map((x) => [x.tenant, x.before, x.count] as const) } : {}),
  };
  return JSON.stringify(wire);
}

const isLoss = (x: unknown): x is [string, string, string, number, number] =>
  Array.isArray(x) && x.length === 5 && typeof x[0] === 'string' && typeof x[1] === 'string' && typeof x[2] === 'string' && Number.isInteger(x[3]) && Number.isSafeInteger(x[4]) && (x[4] as number) > 0;

const isCount = (x: unknown): x is number => Number.isSafeInteger(x) && (x as number) >= 0;
const isSequence = (x: unknown): x is [string, number, number] => Array.isArray(x) && x.length === 3 && typeof x[0] === 'string' && isCount(x[1]) && isCount(x[2]);

/** Reads a batch; throws on a malformed message. */
export function decodeBatch(message: string): { readonly origin: string; readonly events: TenantEvent[]; readonly losses: TenantLoss[]; readonly sequences: TenantSequence[] } {
  const wire = JSON.parse(message) as WireBatch;
  const valid =
    typeof wire?.o === 'string' &&
    Array.isArray(wire.e) &&
    (wire.l === undefined || (Array.isArray(wire.l) && wire.l.every(isLoss))) &&
    (wire.s === undefined || (Array.isArray(wire.s) && wire.s.every(isSequence)));
  if (!valid) throw new Error('not an event batch');
  return {
    origin: wire.o,
    losses: (wire.l ?? []).map(([tenant, sessionId, tool, kind, count]) => ({ tenant, sessionId, tool, kind, count })),
    sequences: (wire.s ?? []).map(([tenant, before, count]) => ({ tenant, before, count })),
    events: wire.e.map(([tenant, data]) => {
      if (typeof tenant !== 'string' || typeof data !== 'string') throw new Error('malformed event in batch');
      return { tenant, event: fromBinary(EventSchema, Buffer.from(data, 'base64')) };
    }),
  };
}
