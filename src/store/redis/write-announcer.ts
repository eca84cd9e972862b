import type { Logger } from '../../log';

/** Options of {@link createWriteAnnouncer}. */
export interface WriteAnnouncerOptions {
  /**
   * Resources held to be announced again, at most; past it they are announced as one write of
   * every resource (each replica then forgets all its memoized reads). @default 1000
   */
  readonly maxWaiting?: number;
  /** Wait before the first new try, in ms; doubled after each try that fails, up to maxDelayMs. @default 100 */
  readonly firstDelayMs?: number;
  /** @default 5000 */
  readonly maxDelayMs?: number;
  readonly logger?: Logger;
}

/** Publishes one announcement: that `resource` was written, or (undefined) that any may have been. */
export type PublishWrite = (resource: string | undefined) => Promise<unknown>;

/** Announces this replica's resource writes, trying again those Redis did not take. */
export interface WriteAnnouncer {
  /** Publishes that `resource` was written, without waiting; one that fails is tried again later. */
  announce(resource: string): void;
  /** Announcements waiting for a new try (a write of every resource counts one). */
  readonly waiting: number;
  /** Stops trying again after one last try of those waiting (resolves when it has answered). */
  close(): Promise<void>;
}

/**
 * A resource write announcement Redis did not take (its connection down or slow, a failover) is
 * published again, with a doubling wait, until it is taken: otherwise the other replicas served a
 * memoized read of the resource, stale, until its memoize TTL. The same resource is held once
 * however often it is written meanwhile, and past `maxWaiting` resources, all are replaced by one
 * announcement that any may have been written: memory stays bounded and nothing is lost, at the
 * price of every replica's memo cache. Announcements arriving late or twice only drop memoized
 * reads again. Whatever waits is logged when the first one fails and when all are taken.
 */
export function createWriteAnnouncer(publish: PublishWrite, options: WriteAnnouncerOptions = {}): WriteAnnouncer {
  const maxWaiting = options.maxWaiting ?? 1000;
  const firstDelayMs = options.firstDelayMs ?? 100;
  const maxDelayMs = options.maxDelayMs ?? 5000;
  const { logger } = options;
  const waiting = new Set<string>();
  let every = false;
  let delayMs = firstDelayMs;
  let timer: NodeJS.Timeout | undefined;
  let trying: Promise<void> | undefined;
  let closed = false;
  let failingSince: number | undefined;
  /** Announcements waiting (a write of every resource counts one). */
  const waitingCount = () => waiting.size + (every ? 1 : 0);

  const schedule = () => {
    if (timer || trying || closed || waitingCount() === 0) return;
    timer = setTimeout(() => void tryAgain(), delayMs);
    timer.unref();
    delayMs = Math.min(delayMs * 2, maxDelayMs);
  };
  const failed = (resource: string | undefined, error: unknown) => {
    if (failingSince === undefined) {
      failingSince = Date.now();
      logger?.warn('a resource write announcement failed: it is published again until Redis takes it; meanwhile the other replicas may serve memoized reads of the resource', { error: (error as Error).message });
    }
    if (resource === undefined || every || waiting.add(resource).size > maxWaiting) {
      every = true;
      waiting.clear();
    }
    schedule();
  };
  const send = (resource: string | undefined) => publish(resource).catch((error: unknown) => failed(resource, error));
  /** Tries every announcement waiting once; those that fail wait again. */
  const tryAgain = async () => {
    timer = undefined;
    const batch: (string | undefined)[] = every ? [undefined] : [...waiting];
    every = false;
    waiting.clear();
    trying = Promise.all(batch.map(send)).then(() => undefined);
    await trying;
    trying = undefined;
    if (waitingCount() > 0) return schedule();
    delayMs = firstDelayMs;
    if (failingSince !== undefined) logger?.info('resource write announcements published again', { afterMs: Date.now() - failingSince });
    failingSince = undefined;
  };

  return {
    announce: (resource) => void send(resource),
    get waiting() {
      return waitingCount();
    },
    async close() {
      closed = true;
      clearTimeout(timer);
      timer = undefined;
      if (trying) await trying;
      else if (waitingCount() > 0) await tryAgain();
      if (waitingCount() > 0) logger?.warn('resource write announcements not published before close: the other replicas may serve memoized reads of them until their memoize TTL', { count: waitingCount() });
    },
  };
}
