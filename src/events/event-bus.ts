import { create } from '@bufbuild/protobuf';
import { EventKind, EventSchema, type Event } from '../../gen/dispatch/v1/dispatch_pb';
import { checkInteger } from '../options';
import { eventBytes } from './event-bounds';
import { matches, type EventFilter } from './event-filter';
import { createRingBuffer, type RingBuffer } from './ring-buffer';

/** The tenant of events that belong to no tenant (a breaker's state); shown to every tenant that sees the tool. */
export const SYSTEM_TENANT = '';

/**
 * Least bytes of events a subscriber that does not read may hold: about 120 CALL_RECEIVED with
 * `debug_payloads` arguments of 8,000 characters fit.
 */
export const DEFAULT_SUBSCRIBER_BUFFER_BYTES = 1_048_576;

/**
 * Bytes of buffer per event of `subscriberBuffer` past DEFAULT_SUBSCRIBER_BUFFER_BYTES, so that
 * ordinary events (200-550 bytes) meet the count first whatever it is set to.
 */
export const SUBSCRIBER_BYTES_PER_EVENT = 1024;

/** The byte bound of a subscriber's buffer of `subscriberBuffer` events: max(1 MiB, 1 KiB each). */
export function subscriberBufferBytesFor(subscriberBuffer: number): number {
  return Math.max(DEFAULT_SUBSCRIBER_BUFFER_BYTES, subscriberBuffer * SUBSCRIBER_BYTES_PER_EVENT);
}

/** Where events go beyond this process (other replicas). */
export interface EventRelay {
  /** True while some other replica has a subscriber; read on every event, so it must be cheap. */
  readonly active: boolean;
  send(tenant: string, event: Event): void;
}

/**
 * Events lost on their way between replicas, by what a filter reads of them (matched as the events
 * themselves would be). Kind 0 (UNSPECIFIED, which no event has) marks a summary that outgrew its
 * bound: it is counted against every subscriber of the tenant.
 */
export interface LostEvents {
  readonly sessionId: string;
  readonly tool: string;
  readonly kind: EventKind;
  readonly count: number;
}

/** One subscriber's view of the bus. */
export interface Subscription {
  readonly tenant: string;
  /** The oldest buffered event, its `dropped` set to the events lost before it; undefined when empty (the next event then wakes the reader). */
  next(): Event | undefined;
  /** Leaves the bus; buffered events are discarded. */
  close(): void;
}

/** How a subscriber is told about its buffer. */
export interface SubscriberHooks {
  /** Events arrived after `next()` came back empty. Called at most once per empty read. */
  readonly wake: () => void;
  /** The bus closed (shutdown); the reader should end its stream. */
  readonly closed: () => void;
}

/** Options of {@link createEventBus}. */
export interface EventBusOptions {
  /** Events buffered per subscriber before the oldest are dropped. @default 1024 */
  readonly subscriberBuffer?: number;
  /**
   * Bytes of events (about: see eventBytes) buffered per subscriber before the oldest are
   * dropped, counted in `dropped` as the events past `subscriberBuffer` are; the newest event is
   * kept whatever its size. @default max(1 MiB, `subscriberBuffer` x 1 KiB) (subscriberBufferBytesFor)
   */
  readonly subscriberBufferBytes?: number;
  /** Subscribers per tenant on this replica. @default 64 */
  readonly maxSubscribersPerTenant?: number;
}

/**
 * The in-process event bus. Publishing is synchronous and O(subscribers of the tenant): each
 * subscriber gets the event in its own bounded buffer, so a slow reader only loses its own
 * oldest events. With no subscriber anywhere, {@link EventBus.wants} is false and callers skip
 * building events at all.
 */
export interface EventBus {
  /** True when an event of `tenant` would reach anyone. */
  wants(tenant: string): boolean;
  /** Delivers to local subscribers and to the relay. */
  publish(tenant: string, event: Event): void;
  /** Delivers to local subscribers only (events that came from another replica). */
  deliverLocal(tenant: string, event: Event): void;
  /**
   * Counts `loss.count` events that another replica could not send (Redis away) in the `dropped`
   * of every local subscriber whose filter they pass. They came after the events the subscriber
   * already holds, so the next event it receives after the report says so (in its `dropped`). A loss
   * of kind 0 and no tool (what was lost is not known) counts for every subscriber of the tenant,
   * and for the system tenant for every subscriber. With `joinedBy` (a performance.now() time),
   * only subscribers that had joined by then count it.
   */
  reportLost(tenant: string, loss: LostEvents, joinedBy?: number): void;
  /** Joins the bus; undefined when the tenant already has its maximum of subscribers. */
  subscribe(tenant: string, filter: EventFilter, hooks: SubscriberHooks): Subscription | undefined;
  readonly subscriberCount: number;
  /** Called whenever the number of local subscribers changes. */
  onSubscriberCount(listener: (count: number) => void): void;
  setRelay(relay: EventRelay | undefined): void;
  /** Decides which tenants see a {@link SYSTEM_TENANT} event about `tool`. @default every tenant */
  setVisibility(visible: (tenant: string, tool: string) => boolean): void;
  /** Closes every subscription. */
  close(): void;
}

interface Subscriber extends Subscription {
  readonly filter: EventFilter;
  readonly buffer: RingBuffer<Event>;
  readonly hooks: SubscriberHooks;
  /** When it joined (performance.now()). */
  readonly joined: number;
  waiting: boolean;
}

/** Creates an event bus. */
export function createEventBus(options: EventBusOptions = {}): EventBus {
  const capacity = options.subscriberBuffer ?? 1024;
  const maxBytes = checkInteger('subscriberBufferBytes', options.subscriberBufferBytes ?? subscriberBufferBytesFor(capacity));
  const maxPerTenant = options.maxSubscribersPerTenant ?? 64;
  const byTenant = new Map<string, Set<Subscriber>>();
  const listeners: ((count: number) => void)[] = [];
  let count = 0;
  let relay: EventRelay | undefined;
  let visible: (tenant: string, tool: string) => boolean = () => true;

  const changed = () => {
    for (const listener of listeners) listener(count);
  };
  const offer = (sub: Subscriber, [event, bytes]: readonly [Event, number]) => {
    if (!matches(sub.filter, event)) return;
    sub.buffer.push(event, bytes);
    if (sub.waiting) {
      sub.waiting = false;
      sub.hooks.wake();
    }
  };
  /** Visits the subscribers that see `tenant`'s events about `tool` (every tenant that sees the tool, for the system tenant). */
  const forEachSubscriber = <A>(tenant: string, tool: string, visit: (sub: Subscriber, arg: A) => void, arg: A, anyTool = false) => {
    if (tenant !== SYSTEM_TENANT) {
      const subs = byTenant.get(tenant);
      if (subs) for (const sub of subs) visit(sub, arg);
      return;
    }
    for (const [subTenant, subs] of byTenant) {
      if (!anyTool && !visible(subTenant, tool)) continue;
      for (const sub of subs) visit(sub, arg);
    }
  };
  const deliverLocal = (tenant: string, event: Event) => forEachSubscriber(tenant, event.tool, offer, [event, eventBytes(event)] as const);
  /** Whether events summarised as `loss` would have passed `filter` (a bound's overflow: any). */
  const lossMatches = (filter: EventFilter, loss: LostEvents) => loss.kind === EventKind.UNSPECIFIED || matches(filter, loss as unknown as Event);
  const countLoss = (sub: Subscriber, [loss, joinedBy]: readonly [LostEvents, number]) => {
    if (sub.joined <= joinedBy && lossMatches(sub.filter, loss)) sub.buffer.addLost(loss.count);
  };

  return {
    reportLost: (tenant, loss, joinedBy = Infinity) => forEachSubscriber(tenant, loss.tool, countLoss, [loss, joinedBy] as const, loss.kind === EventKind.UNSPECIFIED && loss.tool === ''),
    wants: (tenant) => relay?.active === true || (tenant === SYSTEM_TENANT ? count > 0 : byTenant.has(tenant)),
    publish(tenant, event) {
      if (count > 0) deliverLocal(tenant, event);
      if (relay?.active) relay.send(tenant, event);
    },
    deliverLocal,
    subscribe(tenant, filter, hooks) {
      let subs = byTenant.get(tenant);
      if ((subs?.size ?? 0) >= maxPerTenant) return undefined;
      if (!subs) byTenant.set(tenant, (subs = new Set()));
      const tenantSubs = subs;
      const sub: Subscriber = {
        tenant,
        filter,
        hooks,
        buffer: createRingBuffer<Event>(capacity, maxBytes),
        joined: performance.now(),
        waiting: true,
        next() {
          const event = sub.buffer.shift();
          if (event === undefined) {
            sub.waiting = true;
            return undefined;
          }
          const dropped = sub.buffer.takeDropped();
          return dropped === 0 ? event : create(EventSchema, { ...event, dropped: BigInt(dropped) });
        },
        close() {
          if (!tenantSubs.delete(sub)) return;
          sub.buffer.clear();
          if (tenantSubs.size === 0 && byTenant.get(tenant) === tenantSubs) byTenant.delete(tenant);
          count--;
          changed();
        },
      };
      tenantSubs.add(sub);
      count++;
      changed();
      return sub;
    },
    get subscriberCount() {
      return count;
    },
    onSubscriberCount(listener) {
      listeners.push(listener);
    },
    setRelay(next) {
      relay = next;
    },
    setVisibility(next) {
      visible = next;
    },
    close() {
      for (const subs of [...byTenant.values()]) {
        for (const sub of [...subs]) {
          // Told first: what its buffer holds still goes out (the last events of turns that
          // unwound as the replica stopped). Closing clears it.
          sub.hooks.closed();
          sub.close();
        }
      }
    },
  };
}
