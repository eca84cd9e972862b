import { Cluster } from 'ioredis';
import { answerWithin } from '../../pipeline';
import { clusterSubscribers, type RedisClient } from '../../store/redis';
import type { Logger } from '../../log';

/** Subscribers on `channel` (summed over every node of a Cluster); undefined when not known within `timeoutMs`. */
export function subscriberCount(redis: RedisClient, channel: string, timeoutMs: number): Promise<number | undefined> {
  const count = redis instanceof Cluster ? clusterSubscribers(redis, channel) : redis.pubsub('NUMSUB', channel).then((reply) => Number((reply as unknown[])[1]));
  return answerWithin(count, timeoutMs).catch(() => undefined);
}

/** Options of {@link createHostWatch}. */
export interface HostWatchOptions {
  /** Subscribers on a replica's channel now; undefined when not known in time. */
  readonly count: (replica: string) => Promise<number | undefined>;
  /** Time between two counts, in ms. */
  readonly intervalMs: number;
  /** Counts in a row finding no subscriber that deem a replica gone. */
  readonly missesToGone: number;
  /** Told of each watched call of a replica deemed gone. */
  readonly onGone: (id: string, tool: string) => void;
  readonly logger: Logger;
}

/** The replicas running calls whose replies this one awaits. */
export interface HostWatch {
  /** Watches `replica` while call `id` (of `tool`) runs there; returns the unwatch. */
  watch(replica: string, id: string, tool: string): () => void;
  close(): void;
}

/**
 * Watches the replicas running calls this one awaits: a replica that died (SIGKILL, its node
 * lost) leaves no subscriber on its channel, as Redis drops a closed connection's subscriptions,
 * so once `missesToGone` counts in a row, `intervalMs` apart, found none, each of its calls is
 * handed to `onGone` instead of waiting for its deadline. A live replica's subscription that
 * moves (it missed its probes) or reconnects (Redis restarted; at most 1 s between attempts) is
 * back within that time; a count that fails or is late starts the series again. The timer runs
 * only while some call is watched.
 */
export function createHostWatch(options: HostWatchOptions): HostWatch {
  // By replica: the call ids watched there and their tools, and the counts in a row that found no one.
  const hosts = new Map<string, { readonly calls: Map<string, string>; missed: number }>();
  let timer: NodeJS.Timeout | undefined;
  let checking = false;

  async function check(): Promise<void> {
    if (checking) return;
    checking = true;
    try {
      await Promise.all(
        [...hosts].map(async ([replica, host]) => {
          const count = await options.count(replica);
          host.missed = count === 0 ? host.missed + 1 : 0;
          if (host.missed < options.missesToGone) return;
          options.logger.warn('a replica running calls for this one is gone (nothing subscribed on its channel); its calls failed', { replica, calls: host.calls.size });
          for (const [id, tool] of host.calls) options.onGone(id, tool);
        }),
      );
    } finally {
      checking = false;
    }
  }

  return {
    watch(replica, id, tool) {
      let host = hosts.get(replica);
      if (!host) hosts.set(replica, (host = { calls: new Map(), missed: 0 }));
      host.calls.set(id, tool);
      if (!timer) {
        timer = setInterval(() => void check(), options.intervalMs);
        timer.unref();
      }
      return () => {
        host.calls.delete(id);
        if (host.calls.size === 0 && hosts.get(replica) === host) hosts.delete(replica);
        if (hosts.size === 0) {
          clearInterval(timer);
          timer = undefined;
        }
      };
    },
    close() {
      clearInterval(timer);
      timer = undefined;
    },
  };
}
