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

interface WireBatch {
  /** The replica that sent it. */
  readonly o: string;
  /** [tenant, base64 of the binary Event] */
  readonly e: readonly (readonly [string, string])[];
  /** Events lost before this batch: [tenant, session, tool, kind, count]. */
  readonly l?: readonly (readonly [string, string, string, number, number])[];
}

/** One Redis message carrying a batch of events from replica `origin`, and what it lost before them. */
export function encodeBatch(origin: string, events: readonly TenantEvent[], losses: readonly TenantLoss[] = []): string {
  const wire: WireBatch = {
    o: origin,
    e: events.map(({ tenant, event }) => [tenant, Buffer.from(toBinary(EventSchema, event)).toString('base64')] as const),
    ...(losses.length > 0 ? { l: losses.map((x) => [x.tenant, x.sessionId, x.tool, x.kind, x.count] as const) } : {}),
  };
  return JSON.stringify(wire);
}

const isLoss = (x: unknown): x is [string, string, string, number, number] =>
  Array.isArray(x) && x.length === 5 && typeof x[0] === 'string' && typeof x[1] === 'string' && typeof x[2] === 'string' && Number.isInteger(x[3]) && Number.isSafeInteger(x[4]) && (x[4] as number) > 0;

/** Reads a batch; throws on a malformed message. */
export function decodeBatch(message: string): { readonly origin: string; readonly events: TenantEvent[]; readonly losses: TenantLoss[] } {
  const wire = JSON.parse(message) as WireBatch;
  if (typeof wire?.o !== 'string' || !Array.isArray(wire.e) || (wire.l !== undefined && !(Array.isArray(wire.l) && wire.l.every(isLoss)))) throw new Error('not an event batch');
  return {
    origin: wire.o,
    losses: (wire.l ?? []).map(([tenant, sessionId, tool, kind, count]) => ({ tenant, sessionId, tool, kind, count })),
    events: wire.e.map(([tenant, data]) => {
      if (typeof tenant !== 'string' || typeof data !== 'string') throw new Error('malformed event in batch');
      return { tenant, event: fromBinary(EventSchema, Buffer.from(data, 'base64')) };
    }),
  };
}
