import type { Logger } from '../../log';
import type { FinishAttempt } from '../store';

/** An idempotency record that must still reach Redis: the tool ran, or its outcome is unknown. */
export type PendingRecord = Pick<FinishAttempt, 'scope' | 'op' | 'idempotency'>;

/** Records whose write failed, written again once Redis answers. */
export interface PendingWrites {
  add(record: PendingRecord): void;
  /** Writes what it can, oldest first; stops at the first failure. */
  flush(): Promise<void>;
  readonly size: number;
  close(): void;
}

/**
 * Keeps the completion (or UNKNOWN mark) of a call whose finishing write failed while Redis was
 * away, and retries it every `intervalMs` and when the connection returns. Without this, the
 * call's IN_PROGRESS lease would lapse and an identical call could run the side effect again.
 * A release is retried only with its claim's owner, which deletes nothing but that very claim
 * still in progress (one that timed out may reach Redis later and would hold its key for the
 * whole lease); an ownerless release is not: the lease frees the key anyway. At most `max`
 * records wait; beyond that a waiting release goes first, else the oldest record, with a log line.
 */
export function createPendingWrites(write: (record: PendingRecord) => Promise<unknown>, options: { max: number; intervalMs: number; logger?: Logger }): PendingWrites {
  const queue: PendingRecord[] = [];
  let flushing: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;

  const schedule = () => {
    if (timer || queue.length === 0) return;
    timer = setTimeout(() => {
      timer = undefined;
      void pendingWrites.flush();
    }, options.intervalMs);
    timer.unref();
  };

  async function drain(): Promise<void> {
    while (queue.length > 0) {
      const record = queue[0]!;
      try {
        await write(record);
      } catch {
        schedule();
        return;
      }
      // By identity: add() may have dropped records from the queue meanwhile.
      const at = queue.indexOf(record);
      if (at !== -1) queue.splice(at, 1);
    }
    options.logger?.info('pending idempotency records written to redis');
  }

  const pendingWrites: PendingWrites = {
    add(record) {
      if (record.idempotency === undefined || (record.idempotency.action === 'release' && record.idempotency.owner === undefined)) return;
      queue.push(record);
      if (queue.length > options.max) {
        // A release only frees its key before the lease does: drop one of those first.
        const release = queue.findIndex((r) => r.idempotency?.action === 'release');
        const [dropped] = queue.splice(release === -1 ? 0 : release, 1);
        if (dropped?.idempotency?.action !== 'release') options.logger?.error('dropped an idempotency record that could not be written to redis', { max: options.max });
      }
      schedule();
    },
    flush() {
      flushing ??= drain().finally(() => (flushing = undefined));
      return flushing;
    },
    get size() {
      return queue.length;
    },
    close() {
      clearTimeout(timer);
      timer = undefined;
    },
  };
  return pendingWrites;
}
