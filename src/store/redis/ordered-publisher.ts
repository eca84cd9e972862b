import { Cluster, type Redis } from 'ioredis';
import { nodeAddress, type RedisClient } from './connect';
import { checkInteger } from '../../options';

/** Bounds of an {@link OrderedPublisher} on a Cluster (a standalone or Sentinel client has none). */
export interface OrderedPublisherOptions {
  /**
   * Longest wait for the master publishing to answer a PUBLISH; past it the publish fails with a
   * PublishStalledError and the next go through another master. @default 1000
   */
  readonly stallMs?: number;
  /** How long a master that stalled is passed over when a master is chosen. @default 30000 */
  readonly avoidMs?: number;
}

/** PUBLISHes that reach each subscriber in the order they were made (see createOrderedPublisher). */
export interface OrderedPublisher {
  /** Publishes `message` on `channel`; resolves with the subscribers the node that took it counted. */
  publish(channel: string, message: string): Promise<number>;
  /**
   * Whether a PUBLISH made now is written at once: the connection it goes through is ready. One made
   * while it is not waits in the client's queue or is refused; should it then fail, it may never
   * have been sent. One made while it is, Redis may have taken even when it fails (its connection
   * closed before the answer).
   */
  connected(): boolean;
}

/** A PUBLISH the master did not answer in time: it may still be delivered, late. */
export class PublishStalledError extends Error {
  override readonly name = 'PublishStalledError';
}

/**
 * Publishes so that messages arrive in the order they were sent: through the client itself on
 * standalone Redis or Sentinel; on a Cluster always through the same master, which sends them to
 * every other node over its one cluster-bus link, in order (a Cluster client would send each
 * PUBLISH through any node, and messages sent through different nodes reach a subscriber out of
 * order). That master is the first by address at first, and is kept while it is a master and
 * answers. A master that stalls (stopped, or cut off with its connection still open) would hold
 * every PUBLISH until the cluster fails it over: one it has not answered within `stallMs` fails
 * with a PublishStalledError, and the next go through the first master by address that has not
 * stalled within `avoidMs` (when all have, the one that stalled longest ago; a publish is never
 * refused). A change of master may reorder messages once, and a PUBLISH that stalled may still
 * be delivered after later ones: the relays tolerate both (the event relay counts gaps and drops
 * overtaken batches; a worker call whose assignment stalled waits for its reply, and the hosting
 * replica runs no assignment past its deadline, after its cancel or twice; the registry replica
 * re-reads the tools an announcement names, so a late one changes nothing).
 */
export function createOrderedPublisher(client: RedisClient, options: OrderedPublisherOptions = {}): OrderedPublisher {
  const stallMs = options.stallMs ?? 1_000;
  const avoidMs = options.avoidMs ?? 30_000;
  for (const [name, value] of Object.entries({ stallMs, avoidMs })) {
    checkInteger(`ordered publisher: ${name}`, value, {}, String);
  }
  if (!(client instanceof Cluster)) return { publish: (channel, message) => client.publish(channel, message), connected: () => client.status === 'ready' };
  const cluster = client;

  // Masters that stalled, by address: when (performance.now()).
  const stalled = new Map<string, number>();
  let current: string | undefined;

  // Not stalled before stalled; by address among those, by when they stalled among these.
  const before = (a: string, b: string) => {
    const x = stalled.get(a);
    const y = stalled.get(b);
    if (x === y) return a < b;
    return y === undefined ? false : x === undefined || x < y;
  };

  function choose(masters: readonly Redis[]): Redis | undefined {
    const now = performance.now();
    for (const [address, at] of stalled) if (now - at >= avoidMs) stalled.delete(address);
    let chosen: Redis | undefined;
    for (const node of masters) if (!chosen || before(nodeAddress(node), nodeAddress(chosen))) chosen = node;
    current = chosen && nodeAddress(chosen);
    return chosen;
  }

  function master(): Redis | undefined {
    const masters = cluster.nodes('master');
    const held = current === undefined || stalled.has(current) ? undefined : masters.find((node) => nodeAddress(node) === current);
    return held ?? choose(masters);
  }

  return {
    connected: () => master()?.status === 'ready',
    publish(channel, message) {
      const node = master();
      // No node known yet: the client holds the command until it knows them.
      if (!node) return cluster.publish(channel, message);
      const address = nodeAddress(node);
      return new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => {
          stalled.set(address, performance.now());
          reject(new PublishStalledError(`redis master ${address} did not answer a PUBLISH within ${stallMs} ms; it may still be delivered`));
        }, stallMs);
        node.publish(channel, message).then(
          (receivers) => {
            clearTimeout(timer);
            resolve(receivers);
          },
          (error: unknown) => {
            clearTimeout(timer);
            reject(error);
          },
        );
      });
    },
  };
}
