import type { EventEmitter } from 'node:events';
import type { Logger } from '../../log';
import { answerWithin } from '../../pipeline';

/** How long start-up waits for the relay's subscription before serving anyway, in ms. */
const READY_WAIT_MS = 2_000;
/** Longest pause between two tries of a subscription that failed, in ms. */
const RETRY_MAX_MS = 5_000;

/** What the relay's start-up needs: its subscription, then the shared specs' first load. */
export interface RelayStart {
  subscribe(): Promise<void>;
  load(): Promise<void>;
  /** True once the relay is closing: the tries stop. */
  stopped(): boolean;
  readonly logger: Logger;
}

/**
 * Subscribes (trying again after a failure, 250 ms then twice as long each time, up to 5 s), then
 * loads the shared specs, waiting for both READY_WAIT_MS at most: with Redis away, a subscription
 * waits for it without end, and dispatchd never served, not even read-only calls (the store waits
 * 5 s for Redis, then serves). Both complete when Redis answers. `subscribed()` tells the relay
 * when assignments may go out: before, a reply could not be heard.
 */
export async function startInBackground(start: RelayStart): Promise<{ subscribed(): boolean; stop(): void }> {
  let subscribed = false;
  // The pause before the next try, cut short when the relay closes (stopped() then ends the tries).
  let pausing: { timer: NodeJS.Timeout; resolve(): void } | undefined;
  const warn = (what: string) => (error: Error) => start.logger.warn(what, { error: error.message });
  const ready = (async () => {
    for (let pause = 250; !start.stopped() && !subscribed; pause = Math.min(2 * pause, RETRY_MAX_MS)) {
      try {
        await start.subscribe();
        subscribed = true;
      } catch (error) {
        // Closed meanwhile (its connection ended, failing the subscription): no try, no pause.
        if (start.stopped()) break;
        warn('the worker relay could not subscribe; trying again')(error as Error);
        await new Promise<void>((resolve) => (pausing = { timer: setTimeout(resolve, pause).unref(), resolve }));
        pausing = undefined;
      }
    }
    if (subscribed) await start.load().catch(warn('could not load the worker tools shared by other replicas'));
  })();
  if ((await answerWithin(ready, READY_WAIT_MS)) === undefined && !subscribed) {
    start.logger.warn('redis is not reachable yet; calls to workers on other replicas fail UNAVAILABLE (not executed) until it is', { waitedMs: READY_WAIT_MS });
  }
  return {
    subscribed: () => subscribed,
    stop() {
      if (pausing) clearTimeout(pausing.timer);
      pausing?.resolve();
    },
  };
}

/**
 * Races commands against the loss of `client`'s connection to Redis: the returned function gives
 * `work`'s outcome, or rejects as soon as the connection closes first. The relay's connection
 * queues commands while Redis is away (and sends again those it had written when it is back), so a
 * command caught by the loss would otherwise wait for Redis to return, up to the call's deadline.
 * The command itself is not withdrawn: it may still run once Redis is back. One listener, however
 * many commands wait (one per call would pass EventEmitter's warning bound under load).
 */
export function watchConnectionLoss(client: EventEmitter): <T>(work: Promise<T>) => Promise<T> {
  const waiting = new Set<(error: Error) => void>();
  client.on('close', () => {
    const error = new Error('the connection to Redis was lost');
    for (const reject of waiting) reject(error);
    waiting.clear();
  });
  return <T>(work: Promise<T>) =>
    new Promise<T>((resolve, reject) => {
      waiting.add(reject);
      work.then(resolve, reject).finally(() => waiting.delete(reject));
    });
}
