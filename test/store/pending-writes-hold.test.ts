import { createPendingWrites, type PendingRecord } from '../../src/store/redis/pending-writes';
import { createLiveClaims } from '../../src/store/redis/live-claims';

// A completion Redis refused waits in memory; its claim must outlive the claim's lease meanwhile
// (held with its owner), until the completion is written or its own TTL has passed, and an
// identical call on this replica is answered from it.

const scope = { tenant: 't', sessionId: 's' };
const result = { output: 'paid', isError: false, resolvedToolName: 'pay', truncated: false, resultHandle: '', durationMs: 1 };
const complete = (key: string, owner?: string): PendingRecord => ({ scope, op: 'o', idempotency: { key, action: 'complete', ttlSeconds: 60, result }, owner });
const flushed = () => new Promise((r) => setImmediate(r));

function harness(options: { held?: boolean; connected?: () => boolean } = {}) {
  let t = 1_000_000;
  let up = false;
  const holds: Array<[string, number]> = [];
  const written: string[] = [];
  const pending = createPendingWrites(
    async (r) => {
      if (!up) throw new Error('OOM command not allowed when used memory > maxmemory');
      written.push(r.idempotency!.key);
    },
    {
      max: 10,
      intervalMs: 60_000,
      holdMs: 10_000,
      keepAlive: async (r, ms) => {
        holds.push([r.owner!, ms]);
        return options.held ?? true;
      },
      keyOf: (r) => r.idempotency!.key,
      connected: options.connected,
      now: () => t,
    },
  );
  return { pending, holds, written, advance: (ms: number) => (t += ms), redisBack: () => (up = true) };
}

test('a waiting completion holds its claim at once and again halfway through each hold, until it is written', async () => {
  const h = harness();
  h.pending.add(complete('k', 'owner-1'));
  await flushed();
  expect(h.holds).toEqual([['owner-1', 10_000]]);
  h.advance(4_000);
  await h.pending.flush();
  await flushed();
  expect(h.holds).toHaveLength(1);
  h.advance(2_000);
  await h.pending.flush();
  await flushed();
  expect(h.holds).toEqual([['owner-1', 10_000], ['owner-1', 10_000]]);
  expect(h.pending.waiting('k')).toMatchObject({ owner: 'owner-1', idempotency: { action: 'complete', result } });
  h.redisBack();
  await h.pending.flush();
  expect(h.written).toEqual(['k']);
  expect(h.pending.waiting('k')).toBeUndefined();
  h.pending.close();
});

test('no hold without an owner, none once the claim is no longer the owner\'s, and none past the record\'s TTL, when it is dropped', async () => {
  const h = harness({ held: false });
  h.pending.add(complete('anonymous'));
  h.pending.add(complete('lost', 'owner-2'));
  await flushed();
  expect(h.holds).toEqual([['owner-2', 10_000]]);
  expect(h.pending.waiting('anonymous')).toBeUndefined();
  h.advance(30_000);
  await h.pending.flush();
  await flushed();
  expect(h.holds).toHaveLength(1);
  // Still the answer on this replica: the claim is gone, the completion is not written yet.
  expect(h.pending.waiting('lost')).toBeDefined();
  h.advance(31_000);
  await h.pending.flush();
  expect(h.pending.size).toBe(0);
  expect(h.pending.waiting('lost')).toBeUndefined();
  h.pending.close();
});

test('the last hold ends with the record\'s TTL', async () => {
  const h = harness();
  h.pending.add(complete('k', 'owner-3'));
  await flushed();
  h.advance(55_000);
  await h.pending.flush();
  await flushed();
  expect(h.holds).toEqual([['owner-3', 10_000], ['owner-3', 5_000]]);
  h.pending.close();
});

test('live claims: the owner is taken once; past the bound, the oldest is forgotten', () => {
  let t = 0;
  const claims = createLiveClaims(2, () => t);
  claims.add('a', 'o-a', 1_000);
  claims.add('b', 'o-b', 1_000);
  claims.add('c', 'o-c', 1_000);
  expect(claims.take('a')).toBeUndefined();
  expect(claims.take('b')).toBe('o-b');
  expect(claims.take('b')).toBeUndefined();
  // One whose lease ended is forgotten when another is added.
  t = 2_000;
  claims.add('d', 'o-d', 1_000);
  expect(claims.take('c')).toBeUndefined();
  expect(claims.take('d')).toBe('o-d');
});

test('no hold is tried while Redis is away (each would be refused at once, every drain); once connected the holds go on', async () => {
  let connected = false;
  const h = harness({ connected: () => connected });
  for (let i = 0; i < 5; i++) h.pending.add(complete(`k${i}`, `owner-${i}`));
  for (let i = 0; i < 3; i++) {
    h.advance(6_000);
    await h.pending.flush();
  }
  await flushed();
  expect(h.holds).toEqual([]);
  connected = true;
  await h.pending.flush();
  await flushed();
  expect(h.holds).toHaveLength(5);
  h.pending.close();
});

test('live claims: a claim whose lease has ended has no owner to take, and is swept', () => {
  let t = 0;
  const claims = createLiveClaims(100_000, () => t);
  claims.add('old', 'o1', 1_000);
  t = 2_000;
  expect(claims.take('old')).toBeUndefined();
  claims.add('a', 'o2', 1_000);
  expect(claims.take('a')).toBe('o2');
});
