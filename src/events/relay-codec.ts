import { fromBinary, toBinary } from '@bufbuild/protobuf';
import { EventSchema, type Event } from '../../gen/dispatch/v1/dispatch_pb';

/** An event with the tenant it belongs to, as it crosses replicas. */
export interface TenantEvent {
  readonly tenant: string;
  readonly event: Event;
}

interface WireBatch {
  /** The replica that sent it. */
  readonly o: string;
  /** [tenant, base64 of the binary Event] */
  readonly e: readonly (readonly [string, string])[];
}

/** One Redis message carrying a batch of events from replica `origin`. */
export function encodeBatch(origin: string, events: readonly TenantEvent[]): string {
  const wire: WireBatch = { o: origin, e: events.map(({ tenant, event }) => [tenant, Buffer.from(toBinary(EventSchema, event)).toString('base64')] as const) };
  return JSON.stringify(wire);
}

/** Reads a batch; throws on a malformed message. */
export function decodeBatch(message: string): { readonly origin: string; readonly events: TenantEvent[] } {
  const wire = JSON.parse(message) as WireBatch;
  if (typeof wire?.o !== 'string' || !Array.isArray(wire.e)) throw new Error('not an event batch');
  return {
    origin: wire.o,
    events: wire.e.map(([tenant, data]) => {
      if (typeof tenant !== 'string' || typeof data !== 'string') throw new Error('malformed event in batch');
      return { tenant, event: fromBinary(EventSchema, Buffer.from(data, 'base64')) };
    }),
  };
}
