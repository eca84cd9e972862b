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
