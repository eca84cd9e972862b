import { randomUUID } from 'node:crypto';
import type { Logger } from '../../log';
import type { SessionScope } from '../store';
import { createTenantErasedListeners, type TenantErasures } from '../tenant-erasures';
import { storeCall } from './store-call';
import type { RedisClient } from './connect';
import { createOrderedPublisher } from './ordered-publisher';
import { createWatchedSubscriber, type WatchedSubscriber } from './watched-subscriber';
import { createWriteAnnouncer } from './write-announcer';

/** Options of {@link createSessionEnds}. */
export interface SessionEndsOptions {
  /** Key prefix; the channels are `<prefix>:session-ends`, `<prefix>:resource-writes` and `<prefix>:tenant-erasures`. @default "dispatch" */
  readonly prefix?: string;
  /**
   * Opens a connection that queues while Redis is away, for the subscription; without it the
   * other replicas' session ends are not heard (this replica's are still announced).
   */
  readonly connectSubscriber?: () => RedisClient;
  /** On a Cluster, longest wait for the publishing master to answer a probe, in ms. @default 1000 */
  readonly publishStallMs?: number;
  /** Longest wait for Redis to take a tenant erasure's announcement, in ms. @default 1000 */
  readonly timeoutMs?: number;
  readonly logger?: Logger;
}

/**
 * The sessions ended on the replicas sharing a Redis: announced by end-session.lua, heard here;
 * and the resources written there (the memo cache's names), which drop the memoized reads of them.
 */
export interface SessionEnds {
  readonly channel: string;
  /** What end-session.lua publishes when this replica ends `scope`. */
  announcement(scope: SessionScope): string;
  /** Subscribes (the first time; later calls do nothing): each session another replica ends is passed to `heard`. */
  listen(heard: (scope: SessionScope) => void): void;
  /** Publishes that this replica wrote `resource`, without waiting; one Redis does not take is tried again (createWriteAnnouncer). */
  announceWrite(resource: string): void;
  /** Subscribes (the first time; later calls do nothing): each resource another replica wrote is passed to `heard`. */
  listenWrites(heard: (resource: string) => void): void;
  /**
   * Calls `missed` whenever announcements may have been missed: the subscription is heard again
   * after it moved or its connection dropped, or another replica announced that it may have
   * written any resource (more writes waited for Redis than it holds).
   */
  onMissed(missed: () => void): void;
  /** EraseTenant's announcement to every replica, heard by each one's listeners (see TenantErasures). */
  readonly erasures: TenantErasures;
  close(): Promise<void>;
}

interface Announcement {
  readonly origin: string;
  readonly tenant: string;
  readonly sessionId: string;
}

interface WriteAnnouncement {
  readonly origin: string;
  readonly resource?: string;
  /** Any resource may have been written (no `resource`): what replaces writes past WriteAnnouncerOptions.maxWaiting. */
  readonly all?: true;
}

/**
 * Session ends and resource writes over pub/sub, on one subscription. This replica's own
 * announcements are skipped when they come back: its store has told its listeners already, whether
 * or not the script answered in time, and its memo cache dropped what it wrote. One published while
 * the subscription was down or moving is lost: when the subscription is heard again after it was
 * down or moved, `onMissed` tells the owner, which drops what it keeps beside Redis (the memo cache:
 * everything). A write's PUBLISH that Redis did not take is published again until it is
 * (createWriteAnnouncer); a session end is published by its script, which fails with it.
 */
export function createSessionEnds(client: RedisClient, options: SessionEndsOptions = {}): SessionEnds {
  const prefix = options.prefix ?? 'dispatch';
  const channel = `${prefix}:session-ends`;
  const writes = `${prefix}:resource-writes`;
  const erased = `${prefix}:tenant-erasures`;
  const origin = randomUUID();
  const { connectSubscriber, logger } = options;
  let subscriber: WatchedSubscriber | undefined;
  const listeners = new Map<string, (text: string) => void>();
  const missedListeners: (() => void)[] = [];
  const erasedListeners = createTenantErasedListeners(logger);
  const announcer = createWriteAnnouncer((resource) => client.publish(writes, JSON.stringify((resource === undefined ? { origin, all: true } : { origin, resource }) satisfies WriteAnnouncement)), { logger });
  /** Subscribes `on` to heard announcements of its own origin skipped (once per channel). */
  const listenOn = (on: string, what: string, heard: (announcement: Record<string, unknown>) => void) => {
    if (listeners.has(on) || !connectSubscriber) return;
    listeners.set(on, (text) => {
      try {
        const a = JSON.parse(text) as Record<string, unknown>;
        if (a.origin !== origin) heard(a);
      } catch {
        logger?.warn(`an unreadable ${what} announcement was skipped`, { channel: on });
      }
    });
    if (!subscriber) {
      const publisher = createOrderedPublisher(client, { stallMs: options.publishStallMs });
      subscriber = createWatchedSubscriber({ name: 'session ends', connect: connectSubscriber, publisher, logger, prefix });
      subscriber.onMessage((from, text) => listeners.get(from)?.(text));
      subscriber.onMoved(() => missedListeners.forEach((missed) => missed()));
    }
    subscriber.subscribe(on).catch((error: Error) => logger?.warn(`could not subscribe to ${what}s`, { error: error.message }));
  };
  return {
    channel,
    announcement: (scope) => JSON.stringify({ origin, tenant: scope.tenant, sessionId: scope.sessionId } satisfies Announcement),
    listen(heard) {
      listenOn(channel, 'session end', (a) => {
        if (typeof a.tenant === 'string' && typeof a.sessionId === 'string') heard({ tenant: a.tenant, sessionId: a.sessionId });
      });
    },
    announceWrite: (resource) => announcer.announce(resource),
    listenWrites(heard) {
      listenOn(writes, 'resource write', (a) => {
        if (typeof a.resource === 'string') heard(a.resource);
        else if (a.all === true) missedListeners.forEach((missed) => missed());
      });
    },
    onMissed: (missed) => void missedListeners.push(missed),
    erasures: {
      async tenantErased(tenant) {
        erasedListeners.notify(tenant);
        await storeCall("the tenant erasure's announcement", options.timeoutMs ?? 1000, () => client.publish(erased, JSON.stringify({ origin, tenant })));
      },
      onTenantErased(listener) {
        erasedListeners.add(listener);
        listenOn(erased, 'tenant erasure', (a) => {
          if (typeof a.tenant === 'string') erasedListeners.notify(a.tenant);
        });
      },
    },
    async close() {
      await announcer.close();
      await subscriber?.close();
    },
  };
}
