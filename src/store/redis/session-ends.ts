import { randomUUID } from 'node:crypto';
import type { Logger } from '../../log';
import type { SessionScope } from '../store';
import type { RedisClient } from './connect';
import { createOrderedPublisher } from './ordered-publisher';
import { createWatchedSubscriber, type WatchedSubscriber } from './watched-subscriber';

/** Options of {@link createSessionEnds}. */
export interface SessionEndsOptions {
  /** Key prefix; the channel is `<prefix>:session-ends`. @default "dispatch" */
  readonly prefix?: string;
  /**
   * Opens a connection that queues while Redis is away, for the subscription; without it the
   * other replicas' session ends are not heard (this replica's are still announced).
   */
  readonly connectSubscriber?: () => RedisClient;
  /** On a Cluster, longest wait for the publishing master to answer a probe, in ms. @default 1000 */
  readonly publishStallMs?: number;
  readonly logger?: Logger;
}

/** The sessions ended on the replicas sharing a Redis: announced by end-session.lua, heard here. */
export interface SessionEnds {
  readonly channel: string;
  /** What end-session.lua publishes when this replica ends `scope`. */
  announcement(scope: SessionScope): string;
  /** Subscribes (the first time; later calls do nothing): each session another replica ends is passed to `heard`. */
  listen(heard: (scope: SessionScope) => void): void;
  close(): Promise<void>;
}

interface Announcement {
  readonly origin: string;
  readonly tenant: string;
  readonly sessionId: string;
}

/**
 * Session ends over pub/sub. This replica's own announcements are skipped when they come back: its
 * store has told its listeners already, whether or not the script answered in time. One published
 * while the subscription was down or moving is lost: what a replica keeps of that session beside
 * Redis then lasts until its own TTL.
 */
export function createSessionEnds(client: RedisClient, options: SessionEndsOptions = {}): SessionEnds {
  const channel = `${options.prefix ?? 'dispatch'}:session-ends`;
  const origin = randomUUID();
  const { connectSubscriber, logger } = options;
  let subscriber: WatchedSubscriber | undefined;
  return {
    channel,
    announcement: (scope) => JSON.stringify({ origin, tenant: scope.tenant, sessionId: scope.sessionId } satisfies Announcement),
    listen(heard) {
      if (subscriber || !connectSubscriber) return;
      const publisher = createOrderedPublisher(client, { stallMs: options.publishStallMs });
      subscriber = createWatchedSubscriber({ name: 'session ends', connect: connectSubscriber, publisher, logger });
      subscriber.onMessage((from, text) => {
        if (from !== channel) return;
        try {
          const a = JSON.parse(text) as Announcement;
          if (a.origin !== origin && typeof a.tenant === 'string' && typeof a.sessionId === 'string') heard({ tenant: a.tenant, sessionId: a.sessionId });
        } catch {
          logger?.warn('an unreadable session end announcement was skipped', { channel });
        }
      });
      subscriber.subscribe(channel).catch((error: Error) => logger?.warn('could not subscribe to session ends', { error: error.message }));
    },
    close: async () => subscriber?.close(),
  };
}
