import { createPendingWrites, type PendingRecord } from '../../src/store/redis/pending-writes';
import { createLogger } from '../../src/log';

// The records waiting for Redis to come back: what is kept when too many wait, and that a record
// dropped while another is being written does not cost an unwritten one its place.

const scope = { tenant: 't', sessionId: 's' };
const complete = (key: string): PendingRecord => ({ scope, op: 'o', idempotency: { key, action: 'complete', ttlSeconds: 60, result: { output: key, isError: false, resolvedToolName: 'x', truncated: false, resultHandle: '', durationMs: 1 } } });
const release = (key: string, owner?: string): PendingRecord => ({ scope, op: 'o', idempotency: { key, action: 'release', owner } });
const keyOf = (r: PendingRecord) => r.idempotency!.key;

test('full: a waiting release is dropped before any completion, silently; then the oldest record, with a log line', async () => {
  const lines: string[] = [];
  const written: string[] = [];
  const pending = createPendingWrites(async (r) => void written.push(keyOf(r)), { max: 3, intervalMs: 60_000, logger: createLogger('info', (l) => lines.push(l) > 0) });
  pending.add(complete('a'));
  pending.add(release('r', 'owner-1'));
  pending.add(complete('b'));
  pending.add(complete('c'));
  expect(pending.size).toBe(3);
  expect(lines.filter((l) => l.includes('dropped'))).toEqual([]);
  pending.add(complete('d'));
  expect(lines.filter((l) => l.includes('dropped an idempotency record'))).toHaveLength(1);
  await pending.flush();
  expect(written).toEqual(['b', 'c', 'd']);
  pending.close();
});

test('a release without an owner is not kept (the lease frees its key); one with an owner is', async () => {
  const written: string[] = [];
  const pending = createPendingWrites(async (r) => void written.push(keyOf(r)), { max: 10, intervalMs: 60_000 });
  pending.add(release('anyone'));
  pending.add(release('mine', 'owner-2'));
  await pending.flush();
  expect(written).toEqual(['mine']);
  pending.close();
});

test('a record dropped while another is being written: every record still waiting is written once', async () => {
  const written: string[] = [];
  let unblock!: () => void;
  const blocked = new Promise<void>((resolve) => (unblock = resolve));
  const pending = createPendingWrites(
    async (r) => {
      if (keyOf(r) === 'a' && written.length === 0) await blocked;
      written.push(keyOf(r));
    },
    { max: 2, intervalMs: 60_000 },
  );
  pending.add(complete('a'));
  pending.add(complete('b'));
  const flushing = pending.flush();
  // While 'a' is being written, 'c' arrives: the queue is full and drops its oldest, 'a'.
  pending.add(complete('c'));
  unblock();
  await flushing;
  expect(written).toEqual(['a', 'b', 'c']);
  expect(pending.size).toBe(0);
  pending.close();
});

test('a loop-block probe given back alone waits until its lease ends, then is dropped silently; none without a known lease; dropped first when full', async () => {
  const lines: string[] = [];
  let t = 1_000;
  const tried: string[] = [];
  const pending = createPendingWrites(
    async (r) => {
      tried.push(r.unusedProbe ?? keyOf(r));
      throw new Error('READONLY');
    },
    { max: 2, intervalMs: 60_000, now: () => t, logger: createLogger('info', (l) => lines.push(l) > 0) },
  );
  const probe = (holder: string, probeUntil?: number): PendingRecord => ({ scope, op: 'o', unusedProbe: holder, probeUntil });
  pending.add(probe('no-lease'));
  pending.add(probe('ended', t));
  expect(pending.size).toBe(0);
  pending.add(probe('p1', t + 5_000));
  expect(pending.size).toBe(1);
  await pending.flush();
  expect(tried).toEqual(['p1']);
  // Full: the probe goes before a completion, without a log line.
  pending.add(complete('a'));
  pending.add(complete('b'));
  expect(pending.size).toBe(2);
  tried.length = 0;
  await pending.flush();
  expect(tried).toEqual(['a']);
  expect(lines.filter((l) => l.includes('dropped'))).toEqual([]);
  pending.close();
  // Its lease over, a waiting probe is dropped at the next try, and no record is said lost.
  const later = createPendingWrites(async () => Promise.reject(new Error('READONLY')), { max: 10, intervalMs: 60_000, now: () => t, logger: createLogger('info', (l) => lines.push(l) > 0) });
  later.add(probe('p2', t + 5_000));
  t += 5_000;
  await later.flush();
  expect(later.size).toBe(0);
  expect(lines.filter((l) => l.includes('dropped'))).toEqual([]);
  later.close();
});

test('placed (a Cluster): a failed write holds back only the later records of its slot and node; unplaced (one Redis), the pass stops there', async () => {
  // Key 'x<slot>@<node>'.
  const placeOf = (r: PendingRecord) => {
    const [, slot, node] = /^\w(\d+)@(\w+)/.exec(keyOf(r))!;
    return { slot: Number(slot), node };
  };
  const down = new Set(['a1@n1']);
  const tried: string[] = [];
  const write = async (r: PendingRecord) => {
    tried.push(keyOf(r));
    if (down.has(keyOf(r))) throw new Error('timeout');
  };
  const keys = ['a1@n1', 'b2@n2', 'c1@n1', 'd3@n1', 'e4@n2'];
  const placed = createPendingWrites(write, { max: 10, intervalMs: 60_000, placeOf });
  for (const key of keys) placed.add(release(key, 'o'));
  await placed.flush();
  expect(tried).toEqual(['a1@n1', 'b2@n2', 'e4@n2']);
  expect(placed.size).toBe(3);
  // The node back: the rest in their order.
  down.clear();
  tried.length = 0;
  await placed.flush();
  expect(tried).toEqual(['a1@n1', 'c1@n1', 'd3@n1']);
  placed.close();
  down.add('a1@n1');
  tried.length = 0;
  const unplaced = createPendingWrites(write, { max: 10, intervalMs: 60_000 });
  for (const key of keys) unplaced.add(release(key, 'o'));
  await unplaced.flush();
  expect(tried).toEqual(['a1@n1']);
  unplaced.close();
});

test('placed: a slot moved to a healthy node mid-pass stays held back behind its failed record', async () => {
  let node = 'n1';
  const tried: string[] = [];
  const pending = createPendingWrites(
    async (r) => {
      tried.push(keyOf(r));
      if (keyOf(r) === 'first') {
        node = 'n2';
        throw new Error('moved');
      }
    },
    { max: 10, intervalMs: 60_000, placeOf: () => ({ slot: 7, node }) },
  );
  pending.add(release('first', 'o'));
  pending.add(release('second', 'o'));
  await pending.flush();
  expect(tried).toEqual(['first']);
  pending.close();
});
