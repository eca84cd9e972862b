/**
 * Bytes of HTTP tool answers being read at once on a replica: all tenants together
 * (limits.max_answer_bytes_in_flight) and each tenant alone
 * (limits.max_answer_bytes_in_flight_per_tenant). Each answer read opens a reader for the tenant
 * whose call reads it (the caller's, for the config file's tools too), which takes the bytes of
 * each chunk before it decodes it and gives them all back when the read ends, however it ends.
 */
export interface AnswerBudget {
  /** A reader of one answer for `tenant` (the calling tenant: `default` for every call without auth, the config file's tools included), holding nothing yet. */
  open(tenant?: string): AnswerReader;
  /** Bytes held by the readers open now, all tenants together. */
  inUse(): number;
  /** Bytes held by `tenant`'s readers open now. */
  inUseBy(tenant: string): number;
}

/** One answer's share of an {@link AnswerBudget}. */
export interface AnswerReader {
  /**
   * Takes `bytes` (undefined: taken at once), or waits for room until `signal` aborts (rejected
   * with its reason). The oldest open reader of all never waits, so readers never wait for each
   * other in a circle. Any other waits while the chunk would take its tenant past its share (a
   * tenant's oldest open reader passes its share), or while it would take the total past the budget
   * and its tenant already holds an equal split of the budget among the tenants reading now: a
   * tenant within its split never waits for other tenants' bytes. A tenant's readers take room in
   * the order they asked, but never behind another tenant's.
   */
  take(bytes: number, signal: AbortSignal): Promise<void> | undefined;
  /** Gives back what this reader holds, and ends its wait if it waits. */
  close(): void;
}

interface Tenant {
  readonly name: string;
  bytes: number;
  /** Its open readers, oldest first (a Set keeps insertion order). */
  readonly open: Set<Held>;
  /** Its waiting readers, in the order they asked. */
  readonly queue: Waiter[];
}

interface Held {
  readonly tenant: Tenant;
  bytes: number;
}

interface Waiter {
  readonly reader: Held;
  readonly bytes: number;
  readonly grant: () => void;
}

const remove = <T>(list: T[], item: T) => {
  const at = list.indexOf(item);
  if (at >= 0) list.splice(at, 1);
};

/**
 * A budget of `maxBytes` (at least 1) shared by every reader it opens, of which one tenant's
 * readers hold at most `maxBytesPerTenant` together (default: `maxBytes`), beyond its oldest
 * reader's own. The total passes `maxBytes` only by the oldest reader of all and by tenants taking
 * up to their equal split (`maxBytes` / the tenants reading) while the total stays within twice
 * `maxBytes`: at most twice `maxBytes` plus that oldest reader's answer (and a chunk).
 */
export function createAnswerBudget(maxBytes: number, maxBytesPerTenant = maxBytes): AnswerBudget {
  let total = 0;
  const tenants = new Map<string, Tenant>();
  // Every open reader, oldest first: the oldest of all never waits (a Set keeps insertion order).
  const all = new Set<Held>();
  // Every tenant's waiters, in the order they asked: room given back goes to them in that order,
  // passing those whose tenant is at its share (a tenant's wait never holds up another's).
  const queue: Waiter[] = [];
  const oldest = (tenant: Tenant) => tenant.open.values().next().value as Held | undefined;
  // The oldest reader of all takes at once. Any other reader within its tenant's share (its
  // tenant's oldest: whatever it holds; any other: once its tenant's earlier waiters have theirs),
  // and within the total or, past it, while its tenant holds less than an equal split of the budget
  // among the tenants reading now (so other tenants' bytes never hold up a tenant within its split),
  // up to twice the budget (tenants starting one after another while earlier answers stall would
  // otherwise take it to the budget times 2 + 1/2 + ... + 1/k, for k tenants).
  const fits = (reader: Held, bytes: number, first: boolean) =>
    all.values().next().value === reader ||
    ((oldest(reader.tenant) === reader || (first && reader.tenant.bytes + bytes <= maxBytesPerTenant)) &&
      (total + bytes <= maxBytes || (reader.tenant.bytes < maxBytes / tenants.size && total + bytes <= 2 * maxBytes)));
  const add = (held: Held, bytes: number) => {
    held.bytes += bytes;
    held.tenant.bytes += bytes;
    total += bytes;
  };

  const grant = (waiter: Waiter) => {
    remove(queue, waiter);
    remove(waiter.reader.tenant.queue, waiter);
    add(waiter.reader, waiter.bytes);
    waiter.grant();
  };
  // Run when room is given back or a tenant stops reading (the split grows). One pass in order
  // suffices: a grant only takes room, and a tenant's next waiter comes later in the queue.
  const drain = () => {
    for (const waiter of [...queue]) if (fits(waiter.reader, waiter.bytes, waiter.reader.tenant.queue[0] === waiter)) grant(waiter);
  };

  return {
    inUse: () => total,
    inUseBy: (name) => tenants.get(name)?.bytes ?? 0,
    open(name = '') {
      let tenant = tenants.get(name);
      if (!tenant) tenants.set(name, (tenant = { name, bytes: 0, open: new Set(), queue: [] }));
      const held: Held = { tenant, bytes: 0 };
      tenant.open.add(held);
      all.add(held);
      let waiting: { waiter: Waiter; fail: (error: unknown) => void } | undefined;
      const unqueue = (waiter: Waiter) => {
        remove(queue, waiter);
        remove(held.tenant.queue, waiter);
        waiting = undefined;
      };
      return {
        take(bytes, signal) {
          const mine = held.tenant;
          if (fits(held, bytes, mine.queue.length === 0)) {
            add(held, bytes);
            return undefined;
          }
          return new Promise<void>((resolve, reject) => {
            const onAbort = () => {
              unqueue(waiter);
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
            mine.queue.push(waiter);
            drain();
          });
        },
        close() {
          const mine = held.tenant;
          if (!mine.open.delete(held)) return;
          all.delete(held);
          if (waiting) {
            const { waiter, fail } = waiting;
            unqueue(waiter);
            fail(new Error('the answer read ended'));
          }
          total -= held.bytes;
          mine.bytes -= held.bytes;
          held.bytes = 0;
          if (mine.open.size === 0) tenants.delete(mine.name);
          drain();
        },
      };
    },
  };
}
