/**
 * Bytes of HTTP tool answers being read at once on a replica (limits.max_answer_bytes_in_flight).
 * Each answer read opens a reader, which takes the bytes of each chunk before it decodes it and
 * gives them all back when the read ends, however it ends.
 */
export interface AnswerBudget {
  /** A reader of one answer, holding nothing yet. */
  open(): AnswerReader;
  /** Bytes held by the readers open now. */
  inUse(): number;
}

/** One answer's share of an {@link AnswerBudget}. */
export interface AnswerReader {
  /**
   * Takes `bytes` (undefined: taken at once); when they would take the total past the budget, waits
   * for room, until `signal` aborts (rejected with its reason). The oldest open reader never waits,
   * so readers never wait for each other in a circle: the total passes the budget by at most what
   * that one holds.
   */
  take(bytes: number, signal: AbortSignal): Promise<void> | undefined;
  /** Gives back what this reader holds, and ends its wait if it waits. */
  close(): void;
}

interface Waiter {
  readonly reader: Held;
  readonly bytes: number;
  readonly grant: () => void;
}

interface Held {
  bytes: number;
}

/** A budget of `maxBytes` (at least 1) shared by every reader it opens. */
export function createAnswerBudget(maxBytes: number): AnswerBudget {
  let total = 0;
  // Open readers, oldest first (a Set keeps insertion order).
  const open = new Set<Held>();
  const queue: Waiter[] = [];
  const oldest = () => open.values().next().value as Held | undefined;
  const fits = (held: Held, bytes: number) => total + bytes <= maxBytes || oldest() === held;

  const grant = (waiter: Waiter) => {
    queue.splice(queue.indexOf(waiter), 1);
    waiter.reader.bytes += waiter.bytes;
    total += waiter.bytes;
    waiter.grant();
  };
  // The oldest reader's wait ends first; then the others', in order, while they fit.
  const drain = () => {
    const first = queue.find((w) => w.reader === oldest());
    if (first) grant(first);
    while (queue.length > 0 && fits(queue[0]!.reader, queue[0]!.bytes)) grant(queue[0]!);
  };

  return {
    inUse: () => total,
    open() {
      const held: Held = { bytes: 0 };
      open.add(held);
      let waiting: { waiter: Waiter; fail: (error: unknown) => void } | undefined;
      return {
        take(bytes, signal) {
          if (oldest() === held || (queue.length === 0 && total + bytes <= maxBytes)) {
            held.bytes += bytes;
            total += bytes;
            return undefined;
          }
          return new Promise<void>((resolve, reject) => {
            const onAbort = () => {
              queue.splice(queue.indexOf(waiter), 1);
              waiting = undefined;
              reject(signal.reason);
              drain();
            };
            const waiter: Waiter = {
              reader: held,
              bytes,
              grant: () => {
                signal.removeEventListener('abort', onAbort);
                waiting = undefined;
                resolve();
              },
            };
            if (signal.aborted) return reject(signal.reason);
            signal.addEventListener('abort', onAbort, { once: true });
            waiting = {
              waiter,
              fail: (error) => {
                signal.removeEventListener('abort', onAbort);
                reject(error);
              },
            };
            queue.push(waiter);
            drain();
          });
        },
        close() {
          if (!open.delete(held)) return;
          if (waiting) {
            queue.splice(queue.indexOf(waiting.waiter), 1);
            waiting.fail(new Error('the answer read ended'));
            waiting = undefined;
          }
          total -= held.bytes;
          held.bytes = 0;
          drain();
        },
      };
    },
  };
}
