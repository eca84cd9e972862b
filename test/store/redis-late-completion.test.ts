import { randomUUID } from 'node:crypto';
import type { Logger } from '../../src/log';
import type { SessionScope, StoredResult } from '../../src/store';
import { connectRedis, createRedisStore, whenReady, type RedisStore } from '../../src/store/redis';
import { startRedis, type TestRedis } from '../helpers/redis-server';

// A Redis chaos probe: a replica cut off from Redis past its claim's lease (its call ran; its
// record waited), whose key another replica then claimed and ran, overwrote that replica's record
// when it came back: replays on every replica then answered with the first run's result, while
// the second run's caller had been given its own, and only an info line was logged. A completion
// or UNKNOWN mark is now written over its own claim, or where the key holds nothing, never over
// another attempt's claim or record; the operator is warned that the call may have run twice.

jest.setTimeout(30_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fresh = (): SessionScope => ({ tenant: 't', sessionId: `late-${randomUUID()}` });
const result = (output: string): StoredResult => ({ output, isError: false, resolvedToolName: 'pay', truncated: false, resultHandle: '', durationMs: 1 });
const warnings: string[] = [];
const logger: Logger = { debug() {}, info() {}, warn: (message) => void warnings.push(message), error() {} };

let redis: TestRedis;
let a: RedisStore;
let b: RedisStore;
beforeAll(async () => {
  redis = await startRedis({ own: true });
  const open = async () => {
    const client = connectRedis(redis.url);
    await whenReady(client, 5000);
    return createRedisStore(client, { timeoutMs: 1000, logger });
  };
  a = await open();
  b = await open();
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await redis?.close();
});

const claim = (store: RedisStore, scope: SessionScope, owner: string, leaseMs = 30_000) => store.beginAttempt({ scope, op: 'pay', claim: { key: 'K', leaseMs, owner } }).then((r) => r.claim);
const complete = (store: RedisStore, scope: SessionScope, owner: string, output: string) => store.finishAttempt({ scope, op: 'pay', idempotency: { key: 'K', action: 'complete', result: result(output), ttlSeconds: 60, owner } });

test("a completion after its lease lapsed keeps the record of the attempt that claimed the key since, and warns", async () => {
  const scope = fresh();
  warnings.length = 0;
  expect(await claim(a, scope, 'a1', 200)).toEqual({ state: 'claimed' });
  await sleep(350);
  expect(await claim(b, scope, 'b1')).toEqual({ state: 'claimed' });
  await complete(b, scope, 'b1', 'second run');
  await complete(a, scope, 'a1', 'first run');
  for (const store of [a, b]) expect(await claim(store, scope, 'later')).toMatchObject({ state: 'completed', result: { output: 'second run' } });
  expect(warnings).toEqual([expect.stringMatching(/^an attempt's idempotency record was not written: .* the call may have run twice/)]);
});

test("a late completion does not end another attempt's claim still running, nor an UNKNOWN mark a completion", async () => {
  const scope = fresh();
  expect(await claim(a, scope, 'a1', 200)).toEqual({ state: 'claimed' });
  await sleep(350);
  expect(await claim(b, scope, 'b1')).toEqual({ state: 'claimed' });
  await complete(a, scope, 'a1', 'first run');
  expect(await claim(a, scope, 'later')).toEqual({ state: 'in_progress' });
  await complete(b, scope, 'b1', 'second run');
  await a.finishAttempt({ scope, op: 'pay', idempotency: { key: 'K', action: 'unknown', ttlSeconds: 60, owner: 'a1' } });
  expect(await claim(a, scope, 'later')).toMatchObject({ state: 'completed', result: { output: 'second run' } });
});

test('a completion after its lease lapsed with nobody claiming since is written: the next identical call is replayed', async () => {
  const scope = fresh();
  warnings.length = 0;
  expect(await claim(a, scope, 'a1', 200)).toEqual({ state: 'claimed' });
  await sleep(350);
  await complete(a, scope, 'a1', 'only run');
  expect(await claim(b, scope, 'later')).toMatchObject({ state: 'completed', result: { output: 'only run' } });
  expect(warnings).toEqual([]);
});

// The Redis chaos probe again: a finish step whose reply was lost (Redis stalled past the command
// timeout) and that landed, sent again by the pending records' retry, found its own completion
// there and warned "the call may have run twice" when it ran once. A resend of the same record
// (completion or UNKNOWN mark) is now taken as done: nothing kept out, no warning.
test('the same completion or UNKNOWN mark sent again (a lost reply, resent) is no second run: no warning, the record kept', async () => {
  // A store of its own: the others' warnings are throttled (one a 10 s), and this one's must show.
  const said: string[] = [];
  const client = connectRedis(redis.url);
  await whenReady(client, 5000);
  const a = createRedisStore(client, { timeoutMs: 1000, logger: { ...logger, warn: (message) => void said.push(message) } });
  const scope = fresh();
  expect(await claim(a, scope, 'a1')).toEqual({ state: 'claimed' });
  const step = { scope, op: 'pay', idempotency: { key: 'K', action: 'complete' as const, result: result('ran once'), ttlSeconds: 60, owner: 'a1' } };
  await a.finishAttempt(step);
  await a.finishAttempt(step);
  expect(await claim(b, scope, 'later')).toMatchObject({ state: 'completed', result: { output: 'ran once' } });
  const cut = fresh();
  expect(await claim(a, cut, 'a2')).toEqual({ state: 'claimed' });
  const mark = { scope: cut, op: 'pay', idempotency: { key: 'K', action: 'unknown' as const, ttlSeconds: 60, owner: 'a2' } };
  await a.finishAttempt(mark);
  await a.finishAttempt(mark);
  expect(await claim(b, cut, 'later')).toMatchObject({ state: 'unknown' });
  expect(said).toEqual([]);
  // Another attempt's record there is still told.
  await a.finishAttempt({ ...mark, idempotency: { ...mark.idempotency, owner: 'a3' } });
  expect(said).toEqual([expect.stringMatching(/the call may have run twice/)]);
  await a.close();
});
