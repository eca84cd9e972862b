import { HardError } from '../errors';
import { throttledWarn, type Logger } from '../log';
import { onAbort, type TurnSignal } from '../pipeline';
import { closeWithin, createOrderedPublisher, createWatchedSubscriber, type RedisClient, type RedisConnector, type WatchedSubscriber } from '../store/redis';

/** Tells the calls waiting for a shared concurrency slot that one may have come free. */
export interface SlotWakeups {
  /**
   * Wakes the listeners of `channel` when a slot is given back on it by any replica: the first
   * listener (the one that listened longest) whose `wake` answers true, that is, the first that
   * was paused (one busy trying is told to try again, and the next is asked), so each release
   * wakes about one waiting call per replica, the one first in line among them; every listener
   * when messages may have been lost (the subscription moved). Returns what stops it. The first
   * listener of a channel subscribes to it, the last one to stop unsubscribes.
   */
  listen(channel: string, wake: () => boolean): () => void;
  close(): Promise<void>;
}

/** Options of {@link createSlotWakeups}. */
export interface SlotWakeupsOptions {
  /** Opens a connection that queues while Redis is away (connectRedis with queueWhileDown): one publishes the probes, the others subscribe. */
  readonly connect: RedisConnector;
  readonly logger?: Logger;
}

/**
 * The release messages of shared concurrency caps (release-slot.lua publishes one per slot given
 * back), heard through a watched subscription (it moves when it stops hearing its probes). The
 * connections are opened when a call first waits, not before: a replica whose capped tools never
 * fill costs Redis nothing more. A message only wakes the waiters to try again; a waiter that
 * misses one (not yet subscribed, the subscription moving) still tries again on its own timer.
 */
export function createSlotWakeups(options: SlotWakeupsOptions): SlotWakeups {
  const warn = throttledWarn(options.logger);
  const listeners = new Map<string, Set<() => boolean>>();
  let connections: { publisher: RedisClient; subscriber: WatchedSubscriber } | undefined;
  let closed = false;

  function subscriber(): WatchedSubscriber {
    if (connections) return connections.subscriber;
    const publisher = options.connect();
    const sub = createWatchedSubscriber({ name: 'concurrency slots', connect: options.connect, publisher: createOrderedPublisher(publisher), logger: options.logger });
    sub.onMessage((channel) => {
      const set = listeners.get(channel);
      if (set) for (const wake of set) if (wake()) break;
    });
    sub.onMoved(() => listeners.forEach((set) => set.forEach((wake) => wake())));
    connections = { publisher, subscriber: sub };
    return sub;
  }

  const failed = (action: string) => (error: Error) => warn(`shared concurrency caps: ${action} failed; waiting calls try again on their own`, { error: error.message });

  return {
    listen(channel, wake) {
      if (closed) return () => undefined;
      let set = listeners.get(channel);
      if (!set) {
        listeners.set(channel, (set = new Set()));
        subscriber().subscribe(channel).catch(failed('subscribe'));
      }
      set.add(wake);
      return () => {
        if (!set.delete(wake) || set.size > 0 || listeners.get(channel) !== set) return;
        listeners.delete(channel);
        if (!closed) connections?.subscriber.unsubscribe(channel).catch(failed('unsubscribe'));
      };
    },
    async close() {
      closed = true;
      listeners.clear();
      if (!connections) return;
      await connections.subscriber.close();
      await closeWithin(connections.publisher, 1_000);
    },
  };
}

/**
 * The pauses of one call waiting for a shared slot: each ends at its time, or at once when a slot
 * was given back since the last try (a release heard during a try is not lost: the next pause is
 * skipped), and rejects CANCELLED when the call's signal aborts.
 */
export class SlotWaiter {
  private woken = false;
  private resume: (() => void) | undefined;
  private stopListening: (() => void) | undefined;

  constructor(private readonly signal: TurnSignal) {}

  /** Hears the releases on `channel` from now on (once; nothing without wakeups). */
  listen(wakeups: SlotWakeups | undefined, channel: string): void {
    if (!wakeups || this.stopListening) return;
    this.stopListening = wakeups.listen(channel, this.wake);
  }

  /** True when it ended a pause; false when the call was busy trying (it then tries again at once). */
  private readonly wake = (): boolean => {
    this.woken = true;
    if (!this.resume) return false;
    this.resume();
    return true;
  };

  pause(ms: number): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const end = () => {
        clearTimeout(timer);
        stopWatching();
        this.resume = undefined;
        this.woken = false;
      };
      const timer = setTimeout(() => (end(), resolve()), ms);
      const stopWatching = onAbort(this.signal, () => (end(), reject(HardError.cancelled())));
      this.resume = () => (end(), resolve());
    });
  }

  stop(): void {
    this.stopListening?.();
    this.stopListening = undefined;
    this.resume = undefined;
  }
}
