import { randomUUID } from 'node:crypto';
import { EventKind, type Event } from '../../gen/dispatch/v1/dispatch_pb';
import { throttledWarn, type Logger } from '../log';
import { closeWithin, createOrderedPublisher, createWatchedSubscriber, type RedisConnector, type SubscriberWatchOptions } from '../store/redis';
import type { EventBus, EventRelay } from './event-bus';
import { createReceivedSequences } from './received-sequences';
import { decodeBatch, encodeBatch, type TenantEvent, type TenantLoss, type TenantSequence } from './relay-codec';

/** Options of {@link createRedisRelay}. */
export interface RedisRelayOptions extends SubscriberWatchOptions {
  readonly bus: EventBus;
  /** Opens a new connection: for publishing, and for subscribing (again each time the subscription is deemed deaf and moved, see createWatchedSubscriber). */
  readonly connect: RedisConnector;
  readonly logger: Logger;
  /** Channel prefix; events go on `{prefix}`, interest on `{prefix}:interest`. @default "dispatch:events" */
  readonly channel?: string;
  /** Events are gathered this long before one PUBLISH. @default 15 */
  readonly flushMs?: number;
  /** Events waiting for Redis before the oldest are dropped. @default 10000 */
  readonly maxPending?: number;
  /** Events per PUBLISH. @default 500 */
  readonly maxBatch?: number;
  /** A replica with subscribers re-announces its interest this often; silence for 3 periods ends it. @default 5000 */
  readonly heartbeatMs?: number;
  /** Batches published and not yet answered by Redis; past it, events are not sent but counted lost (a stalled node). @default 64 */
  readonly maxUnanswered?: number;
  /**
   * On a Cluster, longest wait for the publishing master to answer a PUBLISH; past it the batch counts as failed and the next go through another master (see createOrderedPublisher).
   * Also, anywhere, the longest wait for Redis to answer the publishing connection's QUIT at close (see closeWithin). @default 1000
   */
  readonly publishStallMs?: number;
}

/** Distinct (tenant, session, tool, kind) groups a relay keeps of events it lost; past it, a tenant's losses are counted for the whole tenant (kind 0). */
export const MAX_LOSS_GROUPS = 1024;
/** Tenants whose sequence a relay keeps, as a sender and per sending replica; events of further tenants carry none. */
export const MAX_SEQUENCED_TENANTS = 10_000;

/** The cross-replica half of the event bus. */
export interface RedisRelay {
  /** Other replicas currently holding subscribers. */
  readonly interestedReplicas: number;
  close(): Promise<void>;
}

interface Interest {
  readonly id: string;
  readonly on?: boolean;
  readonly query?: boolean;
}

/**
 * Carries events between replicas through Redis pub/sub. Every replica listens on a small
 * interest channel; one with local subscribers announces it (and re-announces on a heartbeat),
 * and only while some other replica is interested does this one publish its events, in batches.
 * Received events go to local subscribers only; a replica ignores its own batches.
 *
 * Events this replica cannot send (Redis away or failing, or more waiting than `maxPending`) are
 * not silently gone: they are summarised by what a subscriber's filter reads (tenant, session,
 * tool, kind; bounded, see MAX_LOSS_GROUPS) and the summary rides on the next batch that goes
 * out, so every remote subscriber whose filter they pass counts them in `dropped`. While Redis
 * is away, the other replicas' interest is held as it was (they cannot announce it).
 *
 * Events a replica did publish can still miss a receiver whose own link to Redis was down (pub/sub
 * keeps nothing for it), or deaf until its subscription moved (its node stalled, or its connection
 * went half-open: see createWatchedSubscriber), and a publish can fail. Each batch says, per tenant, how many events of
 * that tenant its sender had published before it, and how many it carries: its events and those its
 * loss summaries of the tenant count. A receiver that finds a gap in a sender's sequence counts the
 * missing events in the `dropped` of every local subscriber of the tenant that was there when the
 * sender's previous batch arrived (what was missed, events or summaries, and so whose filter it
 * passes, is not known), when that tenant's next batch from that sender arrives. A failed publish
 * is left to that count: nothing of it is summarised again, so a batch that failed and is delivered
 * after all counts once. A batch that arrives after a later one (overtaken when a Cluster's
 * publishing master changed) was counted missing then: neither its events nor its summaries of
 * those tenants are applied. On a Cluster, a master that stalls fails the batches it has not
 * answered within `publishStallMs` (counted as any failed publish) and the next go through another
 * master: should such a batch still arrive, it is one of these. Not counted: events a sender held
 * back because it no longer heard of any interest (a receiver cut off for over 3 heartbeats); a gap
 * of the system tenant counts for every subscriber, whatever its tools. Batches Redis has not
 * answered are bounded (`maxUnanswered`): past it, events are counted lost instead of piling up on
 * a stalled node.
 *
 * Tenants past MAX_SEQUENCED_TENANTS have no sequence: a failed publish counts their events lost
 * and carries their summaries again on the next batch. A failed publish may still be delivered (a
 * stalled master's, or one whose answer was lost); those events then arrive as well as counting
 * in `dropped`, and those summaries count twice. Counted rather than left out: a subscriber may
 * be told of a loss that did not happen, but is not left unaware of one that did.
 *
 * Replicas of the previous version read and write the same batches; only what a sequence's count
 * covers changed (then: the batch's events alone, and a failed publish's summaries went out
 * again). Mixed, the one miscount is of an overtaken batch's summaries: a previous-version
 * receiver applies them on top of the gap that counted them (twice); this version skips those
 * of a previous-version sender, which sent them again only if that publish had failed (so they
 * go uncounted when a master change overtook a batch whose publish succeeded).
 */
export function createRedisRelay(options: RedisRelayOptions): RedisRelay {
  const { bus, logger } = options;
  const channel = options.channel ?? 'dispatch:events';
  const interestChannel = `${channel}:interest`;
  const flushMs = options.flushMs ?? 15;
  const maxPending = options.maxPending ?? 10_000;
  const maxBatch = options.maxBatch ?? 500;
  const heartbeatMs = options.heartbeatMs ?? 5_000;
  const maxUnanswered = options.maxUnanswered ?? 64;
  const id = randomUUID();
  const pub = options.connect();
  const publishStallMs = options.publishStallMs ?? 1_000;
  const publisher = createOrderedPublisher(pub, { stallMs: publishStallMs });
  // Probed on the relay's own publisher: a subscription that stops hearing moves (see createWatchedSubscriber).
  const { connect, probeIntervalMs, maxMissedProbes, deafNodeAvoidMs } = options;
  const sub = createWatchedSubscriber({ name: 'event relay', connect, publisher, logger, probeIntervalMs, maxMissedProbes, deafNodeAvoidMs });
  const remote = new Map<string, number>();
  let pending: TenantEvent[] = [];
  let lost = new Map<string, TenantLoss>();
  let unanswered = 0;
  // Sending: events of each tenant published.
  const published = new Map<string, number>();
  const received = createReceivedSequences(bus, MAX_SEQUENCED_TENANTS);
  let flushTimer: NodeJS.Timeout | undefined;
  let listening = false;
  let closed = false;
  const throttled = throttledWarn(logger);
  const warn = (message: string, error?: unknown, fields?: Record<string, number>) =>
    throttled(message, { error: error instanceof Error ? error.message : error === undefined ? undefined : String(error), ...fields });

  const addLoss = (loss: TenantLoss) => {
    const key = `${loss.tenant}\u0000${loss.sessionId}\u0000${loss.tool}\u0000${loss.kind}`;
    const known = lost.get(key);
    if (known) lost.set(key, { ...known, count: known.count + loss.count });
    else if (lost.size < MAX_LOSS_GROUPS || loss.kind === EventKind.UNSPECIFIED) lost.set(key, loss);
    else addLoss({ tenant: loss.tenant, sessionId: '', tool: '', kind: 0, count: loss.count });
  };
  const noteLost = (events: readonly TenantEvent[]) => {
    for (const { tenant, event } of events) addLoss({ tenant, sessionId: event.sessionId, tool: event.tool, kind: event.kind, count: 1 });
  };

  const relay: EventRelay & { active: boolean } = {
    active: false,
    send(tenant: string, event: Event) {
      pending.push({ tenant, event });
      if (pending.length > maxPending) noteLost(pending.splice(0, pending.length - maxPending));
      flushTimer ??= setTimeout(flush, flushMs);
    },
  };
  bus.setRelay(relay);

  function flush(): void {
    flushTimer = undefined;
    const batch = pending;
    pending = [];
    if (pub.status !== 'ready') {
      noteLost(batch);
      return warn("event relay: redis not ready, events not sent to other replicas (counted in their subscribers' dropped once it is back)", undefined, { events: batch.length });
    }
    for (let i = 0; i < batch.length; i += maxBatch) {
      const chunk = batch.slice(i, i + maxBatch);
      if (unanswered >= maxUnanswered) {
        noteLost(chunk);
        warn('event relay: redis has not answered earlier batches, events not sent to other replicas', undefined, { unanswered, events: chunk.length });
        continue;
      }
      const losses = [...lost.values()];
      lost = new Map();
      const sequences = sequence(chunk, losses);
      unanswered++;
      publisher
        .publish(channel, encodeBatch(id, chunk, losses, sequences))
        .catch((e: unknown) => {
          // Receivers find what the sequenced tenants lost by themselves: their next batch shows a gap.
          const sequenced = new Set(sequences.map((x) => x.tenant));
          noteLost(chunk.filter(({ tenant }) => !sequenced.has(tenant)));
          for (const loss of losses) if (!sequenced.has(loss.tenant)) addLoss(loss);
          warn('event relay: publish failed', e);
        })
        .finally(() => unanswered--);
    }
  }

  /** The sequences of a batch about to be published (its events and losses), counted as published. */
  function sequence(chunk: readonly TenantEvent[], losses: readonly TenantLoss[]): TenantSequence[] {
    const counts = new Map<string, number>();
    for (const { tenant } of chunk) counts.set(tenant, (counts.get(tenant) ?? 0) + 1);
    for (const { tenant, count } of losses) counts.set(tenant, (counts.get(tenant) ?? 0) + count);
    const sequences: TenantSequence[] = [];
    for (const [tenant, count] of counts) {
      const before = published.get(tenant);
      if (before === undefined && published.size >= MAX_SEQUENCED_TENANTS) continue;
      published.set(tenant, (before ?? 0) + count);
      sequences.push({ tenant, before: before ?? 0, count });
    }
    return sequences;
  }

  const announce = (message: Omit<Interest, 'id'>) => {
    if (!closed) publisher.publish(interestChannel, JSON.stringify({ id, ...message })).catch((e: unknown) => warn('event relay: announce failed', e));
  };
  const refreshActive = () => {
    // Other replicas cannot renew their interest while Redis is away from this one: hold it.
    if (pub.status !== 'ready') return;
    const now = Date.now();
    for (const [replica, expires] of remote) if (expires <= now) remote.delete(replica);
    relay.active = remote.size > 0;
  };

  function onInterest(text: string): void {
    let message: Interest;
    try {
      message = JSON.parse(text) as Interest;
    } catch {
      return;
    }
    if (typeof message.id !== 'string' || message.id === id) return;
    if (message.query) {
      if (bus.subscriberCount > 0) announce({ on: true });
      return;
    }
    if (message.on) remote.set(message.id, Date.now() + 3 * heartbeatMs);
    else remote.delete(message.id);
    refreshActive();
  }

  function onEvents(text: string): void {
    try {
      const batch = decodeBatch(text);
      if (batch.origin === id) return;
      const overtaken = received.countMissed(batch.origin, batch.sequences);
      for (const { tenant, ...loss } of batch.losses) if (!overtaken?.has(tenant)) bus.reportLost(tenant, loss);
      for (const { tenant, event } of batch.events) if (!overtaken?.has(tenant)) bus.deliverLocal(tenant, event);
    } catch (error) {
      warn('event relay: malformed batch ignored', error);
    }
  }

  sub.onMessage((from, text) => (from === interestChannel ? onInterest(text) : from === channel ? onEvents(text) : undefined));
  sub.subscribe(interestChannel).then(
    () => announce({ query: true }),
    (e: unknown) => warn('event relay: subscribe failed', e),
  );

  const listen = (count: number) => {
    if (closed) return;
    const want = count > 0;
    if (want === listening) return;
    listening = want;
    if (want) {
      // What other replicas sent while no one here listened was lost to no one.
      received.clear();
      sub.subscribe(channel).catch((e: unknown) => warn('event relay: subscribe failed', e));
      announce({ on: true });
    } else {
      sub.unsubscribe(channel).catch((e: unknown) => warn('event relay: unsubscribe failed', e));
      announce({ on: false });
    }
  };
  bus.onSubscriberCount(listen);
  listen(bus.subscriberCount);

  const heartbeat = setInterval(() => {
    refreshActive();
    if (listening) announce({ on: true });
  }, heartbeatMs);
  heartbeat.unref();

  return {
    get interestedReplicas() {
      refreshActive();
      return remote.size;
    },
    async close() {
      if (closed) return;
      if (listening) announce({ on: false });
      closed = true;
      clearInterval(heartbeat);
      if (flushTimer) {
        clearTimeout(flushTimer);
        flush();
      }
      bus.setRelay(undefined);
      await Promise.allSettled([closeWithin(pub, publishStallMs), sub.close()]);
    },
  };
}
