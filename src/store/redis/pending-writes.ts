import type { Logger } from '../../log';
import type { FinishAttempt } from '../store';

/**
 * An idempotency record that must still reach Redis: the tool ran, or its outcome is unknown, or
 * (a release) it did not run, with the loop-block probe it took and did not use (`unusedProbe`);
 * or that probe alone, given back by an attempt that took no claim (a read-only tool's).
 */
export interface PendingRecord extends Pick<FinishAttempt, 'scope' | 'op' | 'idempotency' | 'unusedProbe'> {
  /** The owner of the claim a completion or UNKNOWN mark ends: that claim is kept alive while it waits. */
  readonly owner?: string;
  /**
   * With `unusedProbe` and no idempotency part: when the probe's lease ends at the latest (epoch
   * ms), when Redis frees it anyway and the give-back is dropped; none known, it is not kept.
   */
  readonly probeUntil?: number;
}

/**
 * `entry`'s record as it is written at `t`: a completion or UNKNOWN mark with the TTL it has left,
 * so that it lives its TTL from its call, not from this late write (at least 1 ms: PX 0 is refused).
 */
function withTtlLeft(entry: Entry, t: number): PendingRecord {
  const { record } = entry;
  const idempotency = record.idempotency;
  if (idempotency === undefined || idempotency.action === 'release') return record;
  return { ...record, idempotency: { ...idempotency, ttlSeconds: Math.max(1, Math.ceil(entry.expiresAt - t)) / 1000 } };
}

/** Whether a waiting record only frees something before its lease would (a release, a probe given back). */
const freesOnly = (r: PendingRecord) => r.idempotency === undefined || r.idempotency.action === 'release';

/** Options of {@link createPendingWrites}. */
export interface PendingWritesOptions {
  /** Records kept at most. */
  readonly max: number;
  /** Interval between attempts to write them, in ms. */
  readonly intervalMs: number;
  /**
   * Holds a waiting record's claim (its `owner`'s) `ms` longer from now; resolves false when the
   * claim is no longer that owner's (expired, replaced, or the record written): nothing to hold.
   */
  readonly keepAlive?: (record: PendingRecord, ms: number) => Promise<boolean>;
  /** Whether Redis is connected now: no hold is tried while it is not. @default always */
  readonly connected?: () => boolean;
  /** How long one keepAlive holds a claim, in ms; it is renewed halfway. @default max(10000, 3 × intervalMs) */
  readonly holdMs?: number;
  /**
   * On a Redis Cluster, where a record is written (its session's slot, the node serving it now): a
   * write that fails then holds back the later records of that slot and node only. @default none: one Redis, a failure ends the pass
   */
  readonly placeOf?: (record: PendingRecord) => { readonly slot: number; readonly node?: string };
  /** The key a waiting record is found by with {@link PendingWrites.waiting}. */
  readonly keyOf?: (record: PendingRecord) => string;
  readonly logger?: Logger;
  readonly now?: () => number;
}

/** Records whose write failed, written again once Redis answers. */
export interface PendingWrites {
  add(record: PendingRecord): void;
  /** Writes what it can, oldest first; stops at the first failure (on a Cluster, for that slot and node only). */
  flush(): Promise<void>;
  /** The completion or UNKNOWN mark with an owner waiting under `key` (see keyOf), if any. */
  waiting(key: string): PendingRecord | undefined;
  readonly size: number;
  /** Stops the retries; a record added after (its step failed once the store closed) is logged and dropped. */
  close(): void;
}

interface Entry {
  readonly record: PendingRecord;
  /** When the record would have expired, had it been written at once (epoch ms; Infinity for a release; a lone probe's lease end). */
  readonly expiresAt: number;
  /** Its key for {@link PendingWrites.waiting}: a completion or UNKNOWN mark with an owner. */
  readonly key?: string;
  /** Until when its claim is known held (epoch ms), and whether there is a claim to hold. */
  heldUntil: number;
  holds: boolean;
  holding?: boolean;
  /** Out of the queue (written, dropped): a pass that listed it before skips it. */
  gone?: boolean;
}

/**
 * Keeps the completion (or UNKNOWN mark) of a call whose finishing write failed while Redis was
 * away or full, and retries it every `intervalMs` and when the connection returns. Meanwhile the
 * call's claim, when its owner is known, is held (`keepAlive`) at once and every `holdMs / 2`,
 * since its lease would end first and an identical call could then run the side effect again; up
 * to the record's own TTL, when it is dropped, written or not. A release is retried only with its
 * claim's owner, which deletes nothing but that very claim still in progress (one that timed out
 * may reach Redis later and would hold its key for the whole lease); an ownerless release is not:
 * the lease frees the key anyway. A loop-block probe given back alone (its attempt took no claim)
 * is retried until its lease ends (`probeUntil`), then dropped: Redis has freed it. At most `max`
 * records wait; beyond that a waiting release or probe goes first, else the oldest record, with a
 * log line.
 */
export function createPendingWrites(write: (record: PendingRecord) => Promise<unknown>, options: PendingWritesOptions): PendingWrites {
  const queue: Entry[] = [];
  const byKey = new Map<string, Entry>();
  const now = options.now ?? Date.now;
  const holdMs = options.holdMs ?? Math.max(10_000, 3 * options.intervalMs);
  let flushing: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const schedule = () => {
    if (closed || timer || queue.length === 0) return;
    timer = setTimeout(() => {
      timer = undefined;
      void pendingWrites.flush();
    }, options.intervalMs);
    timer.unref();
  };

  const remove = (entry: Entry) => {
    // By identity: add() may have dropped records from the queue meanwhile.
    const at = queue.indexOf(entry);
    if (at !== -1) queue.splice(at, 1);
    entry.gone = true;
    if (entry.key !== undefined && byKey.get(entry.key) === entry) byKey.delete(entry.key);
  };

  function hold(entry: Entry): void {
    const t = now();
    if (!entry.holds || entry.holding || entry.heldUntil - t > holdMs / 2 || t >= entry.expiresAt) return;
    // Nothing can be held while Redis is away: each hold would be refused at once, every drain.
    if (options.connected && !options.connected()) return;
    const ms = Math.max(1, Math.min(holdMs, entry.expiresAt - t));
    entry.holding = true;
    options.keepAlive!(entry.record, ms).then(
      (held) => {
        entry.holding = false;
        if (held) entry.heldUntil = t + ms;
        else entry.holds = false;
      },
      () => (entry.holding = false),
    );
  }

  async function drain(): Promise<void> {
    const t = now();
    const expired = queue.filter((e) => e.expiresAt <= t);
    for (const entry of expired) remove(entry);
    // A probe given back past its lease is simply moot (Redis freed it): no record was lost.
    const lost = expired.filter((e) => e.record.idempotency !== undefined).length;
    if (lost > 0) options.logger?.warn('idempotency records that could not be written to redis within their TTL were dropped', { count: lost });
    // Oldest first, and those added meanwhile. On a Cluster a failed write holds back only the later
    // records of its slot and node (a key's records share its slot: their order is kept), not those
    // of healthy nodes behind it; on one Redis the pass ends there.
    const heldBack = new Set<string>();
    const seen = new Set<Entry>();
    let failed = false;
    for (let next = [...queue]; next.length > 0; next = queue.filter((e) => !seen.has(e))) {
      for (const entry of next) {
        seen.add(entry);
        if (entry.gone) continue;
        const place = options.placeOf?.(entry.record);
        const slot = `s${place?.slot}`;
        const node = place?.node === undefined ? undefined : `n${place.node}`;
        // Held back for the rest of the pass by its slot too, should the slot move meanwhile.
        if (heldBack.has(slot) || (node !== undefined && heldBack.has(node))) {
          heldBack.add(slot);
          continue;
        }
        try {
          await write(withTtlLeft(entry, now()));
          remove(entry);
        } catch {
          failed = true;
          if (!place) break;
          heldBack.add(slot);
          if (node !== undefined) heldBack.add(node);
        }
      }
      if (failed && !options.placeOf) break;
    }
    if (failed) {
      for (const waiting of queue) hold(waiting);
      schedule();
      return;
    }
    options.logger?.info('pending idempotency records written to redis');
  }

  const pendingWrites: PendingWrites = {
    add(record) {
      const idempotency = record.idempotency;
      // A probe given back alone waits until its lease would end (a late write frees only its
      // holder's probe): else identical calls are refused LOOP_BLOCKED for that whole lease.
      const probeUntil = idempotency === undefined && record.unusedProbe ? record.probeUntil : undefined;
      if (idempotency === undefined ? probeUntil === undefined || probeUntil <= now() : idempotency.action === 'release' && idempotency.owner === undefined) return;
      // A step that failed after close (in flight then): its client is closed, nothing can write it.
      // Kept, its retry timer tried it on that client every intervalMs for as long as the process lived.
      if (closed) {
        if (!freesOnly(record)) options.logger?.error('an idempotency record could not be written to redis before the store closed', { count: 1 });
        return;
      }
      const ends = idempotency !== undefined && idempotency.action !== 'release' && record.owner !== undefined;
      const entry: Entry = {
        record,
        expiresAt: idempotency === undefined ? probeUntil! : idempotency.action === 'release' ? Infinity : now() + idempotency.ttlSeconds * 1000,
        key: ends ? options.keyOf?.(record) : undefined,
        heldUntil: 0,
        holds: ends && options.keepAlive !== undefined,
      };
      queue.push(entry);
      if (entry.key !== undefined) byKey.set(entry.key, entry);
      if (queue.length > options.max) {
        // A release (or a probe given back) only frees its key before the lease does: drop one of those first.
        const release = queue.findIndex((e) => freesOnly(e.record));
        const dropped = queue[release === -1 ? 0 : release]!;
        remove(dropped);
        if (!freesOnly(dropped.record)) options.logger?.error('dropped an idempotency record that could not be written to redis', { max: options.max });
      }
      if (queue.includes(entry)) hold(entry);
      schedule();
    },
    flush() {
      flushing ??= drain().finally(() => (flushing = undefined));
      return flushing;
    },
    waiting(key) {
      const entry = byKey.get(key);
      return entry && entry.expiresAt > now() ? entry.record : undefined;
    },
    get size() {
      return queue.length;
    },
    close() {
      closed = true;
      clearTimeout(timer);
      timer = undefined;
    },
  };
  return pendingWrites;
}
