import { randomUUID } from 'node:crypto';
import { Cluster, type Redis } from 'ioredis';
import { throttledWarn, type Logger } from '../../log';
import { closeWithin, dropConnections } from './close-within';
import { nodeAddress, type RedisConnector } from './connect';
import type { OrderedPublisher } from './ordered-publisher';
import { checkInteger } from '../../options';

/** Bounds of a {@link WatchedSubscriber}'s liveness check. */
export interface SubscriberWatchOptions {
  /** How often a probe is published on the subscriber's own channel; one at a time: none goes out while the last is unanswered. @default 1000 */
  readonly probeIntervalMs?: number;
  /** Probes in a row that Redis took but the subscriber did not hear before it is deemed deaf and moved. @default 2 */
  readonly maxMissedProbes?: number;
  /** On a Cluster, how long a node the subscriber was deaf on is passed over when one is chosen. @default 30000 */
  readonly deafNodeAvoidMs?: number;
}

/** Options of {@link createWatchedSubscriber}. */
export interface WatchedSubscriberOptions extends SubscriberWatchOptions {
  /**
   * Opens a connection that queues while Redis is away (connectRedis with queueWhileDown): on
   * standalone Redis or Sentinel, each one the subscriber uses; on a Cluster, called once, for the
   * client that tells the masters.
   */
  readonly connect: RedisConnector;
  /** Publishes the probes: the owner's ordered publisher, so that a probe a stalled master holds says nothing of the subscriber. */
  readonly publisher: OrderedPublisher;
  readonly logger?: Logger;
  /** Names the owner in warnings. */
  readonly name: string;
  /** The owner's key prefix: the probe channel is `<prefix>:probe:<id>`, within its ACL's `&<prefix>:*` (under `dispatch:` whatever the prefix, each SUBSCRIBE of it with the owner's channels was refused whole, NOPERM). @default "dispatch" */
  readonly prefix?: string;
}

/** A pub/sub subscription that moves to another connection when it stops hearing its own probes. */
export interface WatchedSubscriber {
  /** Subscribes `channels` on the current connection and on every later one. */
  subscribe(...channels: string[]): Promise<void>;
  unsubscribe(...channels: string[]): Promise<void>;
  /** Calls `listener` with each message of a subscribed channel (the probes excepted). */
  onMessage(listener: (channel: string, message: string) => void): void;
  /**
   * Calls `listener` once a new connection has subscribed after a move, or the connection has
   * subscribed again after it dropped and reconnected: what was published meanwhile was lost.
   */
  onMoved(listener: () => void): void;
  close(): Promise<void>;
}

/**
 * Keeps a subscription alive: every `probeIntervalMs` a probe is published on a channel of this
 * subscriber's own, and when `maxMissedProbes` in a row that Redis took were not heard by the next
 * one, the connection is deemed deaf (its node stalled, or a half-open connection after a network
 * partition) and the subscription moves to a new connection, with its channels and listeners.
 * A probe Redis did not take (the publishing master stalled, Redis away) says nothing either way,
 * and none goes out while the last is unanswered: a publisher that queues while Redis is away holds
 * one probe, not one per interval. Probes are published only once the connection's subscription
 * is confirmed (after a move or a reconnection, a probe published at once would reach Redis before
 * the SUBSCRIBE and count as missed), and one sent before the connection dropped or moved is not
 * counted. A connection whose subscription is not confirmed within `maxMissedProbes` + 1 intervals
 * moves again: on a Cluster, its node stalled too; anywhere, while it is up (Redis refused the
 * SUBSCRIBE: NOPERM, its user denied the channels until an operator allows them again).
 *
 * On standalone Redis or Sentinel the new connection is a fresh one from `connect`. On a Cluster
 * it is a plain connection to a master chosen at random among those the subscriber has not been
 * deaf on within `deafNodeAvoidMs` (all of them: the one deaf on longest ago). Any node will do: the
 * cluster bus brings every PUBLISH to every node. Not the Cluster client's own subscriber: it
 * picks a node at random (the deaf one again, as likely as any) and picks again only once its
 * connection ends or the node leaves the slots, which a stalled node's does not until the cluster
 * fails it over. A connection that drops reconnects by itself (to the same node on a Cluster);
 * when that does not help, the probes move it. Messages published while the subscriber was deaf
 * are lost; `onMoved` tells the owner (after a move, and after a dropped connection subscribed
 * again), which copes as with any loss. A probe is one small PUBLISH
 * per interval per subscriber.
 */
export function createWatchedSubscriber(options: WatchedSubscriberOptions): WatchedSubscriber {
  const probeIntervalMs = options.probeIntervalMs ?? 1_000;
  const maxMissedProbes = options.maxMissedProbes ?? 2;
  const deafNodeAvoidMs = options.deafNodeAvoidMs ?? 30_000;
  for (const [name, value] of Object.entries({ probeIntervalMs, maxMissedProbes, deafNodeAvoidMs })) {
    checkInteger(`watched subscriber: ${name}`, value, {}, String);
  }
  const { logger, publisher } = options;
  const probeChannel = `${options.prefix ?? 'dispatch'}:probe:${randomUUID()}`;
  const wanted = new Set<string>([probeChannel]);
  // A SUBSCRIBE refused again and again (NOPERM until the rules allow it) moves every few intervals: said once a minute.
  const refusedWarn = throttledWarn(logger, 60_000);
  const subscribeFailed = (conn: Redis) => (error: Error) => void (conn === current && refusedWarn(`${options.name}: subscribe failed`, { error: error.message }));
  const listeners: ((channel: string, message: string) => void)[] = [];
  const movedListeners: (() => void)[] = [];
  const first = options.connect('subscriber');
  const cluster = first instanceof Cluster ? first : undefined;
  // Standalone or Sentinel: the first connection, until it is used.
  let spare = cluster ? undefined : (first as Redis);
  // Nodes the subscriber was deaf on, by address: when (performance.now()).
  const avoided = new Map<string, number>();
  let current: Redis | undefined;
  let opened: () => void = () => undefined;
  let whenOpen = new Promise<void>((resolve) => (opened = resolve));
  let closed = false;
  // Whether the current connection's subscription to the probe channel is confirmed: probes go out only then.
  let confirmed = false;
  // Intervals since the current connection was opened, while its subscription is not confirmed.
  let unconfirmedFor = 0;
  // Bumped whenever the subscription may have lapsed (a move, a dropped connection): a probe sent
  // in an earlier epoch says nothing of the subscription now.
  let epoch = 0;
  let missed = 0;

  const fanOut = (channel: string, message: string) => {
    if (channel === probeChannel) return heard(message);
    for (const listener of listeners) {
      try {
        listener(channel, message);
      } catch (error) {
        logger?.warn(`${options.name}: a message handler failed`, { error: error instanceof Error ? error.message : String(error) });
      }
    }
  };

  // Called in a SUBSCRIBE's reply handler, where a throw would be an unhandled rejection.
  const tellMoved = () => {
    for (const listener of movedListeners) {
      try {
        listener();
      } catch (error) {
        logger?.warn(`${options.name}: a handler of lost messages failed`, { error: error instanceof Error ? error.message : String(error) });
      }
    }
  };

  function chooseNode(masters: readonly Redis[]): Redis | undefined {
    const now = performance.now();
    for (const [address, at] of avoided) if (now - at >= deafNodeAvoidMs) avoided.delete(address);
    const fresh = masters.filter((node) => !avoided.has(nodeAddress(node)));
    if (fresh.length > 0) return fresh[Math.floor(Math.random() * fresh.length)];
    let chosen: Redis | undefined;
    for (const node of masters) if (!chosen || avoided.get(nodeAddress(node))! < avoided.get(nodeAddress(chosen))!) chosen = node;
    return chosen;
  }

  /** A new connection to subscribe through, or undefined while no Cluster node is known. */
  function connection(): Redis | undefined {
    let conn: Redis;
    if (cluster) {
      const node = chooseNode(cluster.nodes('master'));
      if (!node) return undefined;
      conn = node.duplicate({ lazyConnect: false, readOnly: false, enableOfflineQueue: true, retryStrategy: cluster.options.clusterRetryStrategy });
      conn.on('error', () => undefined);
    } else {
      conn = spare ?? (options.connect('subscriber') as Redis);
      spare = undefined;
    }
    // Subscribed again on reconnection here (see open), where a failure is handled: ioredis's own
    // re-SUBSCRIBE has no handler, and a connection dropped before its reply (a move, a close Redis
    // did not answer in time) rejected it unhandled, which ends the process.
    conn.options.autoResubscribe = false;
    return conn;
  }

  const confirm = (conn: Redis) => {
    if (conn !== current || conn.status !== 'ready') return;
    confirmed = true;
    unconfirmedFor = 0;
    missed = 0;
  };

  function open(afterMove: boolean): void {
    const conn = connection();
    if (!conn) return;
    current = conn;
    confirmed = false;
    unconfirmedFor = 0;
    conn.on('message', fanOut);
    // Whether the connection dropped since its subscription was last confirmed.
    let dropped = false;
    conn.on('close', () => {
      if (conn !== current) return;
      confirmed = false;
      dropped = true;
      epoch++;
    });
    // Reconnected (or connected at last): the channels are subscribed again, probes go out once
    // Redis confirms. Once more on the first connection, which SUBSCRIBE below also does: harmless.
    // After a drop, what was published meanwhile was lost, as after a move: the owner is told.
    conn.on('ready', () => {
      if (conn !== current) return;
      conn.subscribe(...wanted).then(() => {
        confirm(conn);
        if (!dropped || conn !== current || conn.status !== 'ready') return;
        dropped = false;
        tellMoved();
      }, subscribeFailed(conn));
    });
    opened();
    conn.subscribe(...wanted).then(
      () => {
        confirm(conn);
        if (afterMove && conn === current) tellMoved();
      },
      subscribeFailed(conn),
    );
  }

  const drop = (conn: Redis) => {
    conn.off('message', fanOut);
    dropConnections(conn);
  };

  // Lets Redis forget the subscription before close resolves; dropped when Redis does not answer within an interval.
  function release(conn: Redis): Promise<void> {
    conn.off('message', fanOut);
    return closeWithin(conn, probeIntervalMs);
  }

  function move(why: string, warn: (message: string, fields: Record<string, unknown>) => void = (m, f) => logger?.warn(m, f)): void {
    const deaf = current;
    if (deaf) {
      if (cluster) avoided.set(nodeAddress(deaf), performance.now());
      warn(`${options.name}: redis subscriber ${why}; subscribing on a new connection`, { node: cluster ? nodeAddress(deaf) : undefined });
      drop(deaf);
      current = undefined;
      whenOpen = new Promise<void>((resolve) => (opened = resolve));
    }
    epoch++;
    missed = 0;
    open(true);
  }

  // The last probe sent: in which epoch, whether Redis took it (or failed it), whether it was heard.
  let probe: { readonly seq: number; readonly epoch: number; settled: boolean; answered: boolean; heard: boolean } | undefined;
  let seq = 0;
  function heard(message: string): void {
    if (probe && message === String(probe.seq)) probe.heard = true;
  }
  const timer = setInterval(() => {
    if (probe && !probe.settled) return;
    const last = probe;
    probe = undefined;
    if (last?.heard) missed = 0;
    else if (last?.answered && last.epoch === epoch && ++missed >= maxMissedProbes) return move(`heard none of its last ${maxMissedProbes} probes`);
    if (!confirmed) {
      // A Cluster node that never answers; or a connection up whose SUBSCRIBE Redis refused (its
      // user denied the channels, NOPERM), which nothing else would send again.
      if (current && (cluster || current.status === 'ready') && ++unconfirmedFor > maxMissedProbes) move(`could not subscribe within ${maxMissedProbes + 1} probe intervals`, refusedWarn);
      return;
    }
    const next = { seq: ++seq, epoch, settled: false, answered: false, heard: false };
    probe = next;
    publisher.publish(probeChannel, String(next.seq)).then(
      () => {
        next.settled = true;
        next.answered = true;
      },
      () => (next.settled = true),
    );
  }, probeIntervalMs);
  timer.unref();

  if (cluster) cluster.once('ready', () => current ?? open(false));
  else open(false);

  return {
    async subscribe(...channels) {
      for (const channel of channels) wanted.add(channel);
      for (;;) {
        await whenOpen;
        const conn = current;
        if (closed) return;
        // Moved, and no Cluster node known yet: the next connection is waited for.
        if (!conn) continue;
        try {
          await conn.subscribe(...channels);
          return;
        } catch (error) {
          // Moved meanwhile: the new connection subscribes them too, and is waited for.
          if (conn === current) throw error;
        }
      }
    },
    async unsubscribe(...channels) {
      for (const channel of channels) wanted.delete(channel);
      await current?.unsubscribe(...channels);
    },
    onMessage: (listener) => void listeners.push(listener),
    onMoved: (listener) => void movedListeners.push(listener),
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      opened();
      const last = current;
      current = undefined;
      // The Cluster client only told the masters: nothing of it to let Redis forget.
      cluster?.disconnect();
      if (last) await release(last);
    },
  };
}
