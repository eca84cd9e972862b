import { createToolRates } from '../../src/guards';
import { createAbortScope, type AbortScope } from '../../src/pipeline';
import { connectRedis, whenReady, type RedisClient } from '../../src/store/redis';
import { startRedis, type TestRedis } from '../helpers/redis-server';

// A turn of a shared rate limit given back (give-turn.lua) is known by the limit's time it set
// (take-turn.lua's answer), not by the wait its caller thinks it has left: that one is measured
// after the reply was handled, and an event loop busy while the reply arrived (another tenant's
// schema compile, say) made it match a later turn still queued, moved back under it; the next
// turn then started with that one. A real redis-server; the event loop is held 300 ms by a busy
// loop while the take's reply arrives.

jest.setTimeout(30_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const spin = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

let redis: TestRedis;
let client: RedisClient;
beforeAll(async () => {
  redis = await startRedis();
  client = connectRedis(redis.url);
  expect(await whenReady(client, 5_000)).toBe(true);
});
afterAll(async () => {
  client?.disconnect();
  await redis?.close();
});

function limit(name: string, perSecond: number) {
  const rates = createToolRates([{ match: [name], perSecond, burst: 1, waitMs: 10_000, shared: true, text: `${perSecond} calls per second` }], { redis: client })!;
  const tool = { tenant: '', name, timeoutMs: 30_000 };
  /** Takes a turn; resolves with when it came (performance.now()), or with the error when cancelled. */
  const take = (scope: AbortScope = createAbortScope()) => Promise.resolve(rates.take(tool, scope.signal, Date.now() + 60_000)).then(() => performance.now(), (e: Error) => e);
  return take;
}

test('a turn given back after a stall, under later turns still waiting, stays spent', async () => {
  const take = limit('stalled', 10);
  // Ten turns queued first (100 ms apart): A's turn is ~1 s away.
  const queued = Array.from({ length: 10 }, () => take());
  await sleep(20);
  const scopeA = createAbortScope();
  const a = take(scopeA);
  spin(300);
  await sleep(20);
  // B, C and D queue behind A; then A's client cancels.
  const [, , d] = [take(), take(), take()];
  await sleep(20);
  scopeA.abort();
  expect(await a).toBeInstanceOf(Error);
  await sleep(20);
  const e = take();
  const [dAt, eAt] = [await d, await e];
  await Promise.all(queued);
  // E one interval after D (they came together, 0-2 ms apart, when A's turn moved back under D).
  expect(eAt as number).toBeGreaterThanOrEqual((dAt as number) + 60);
});

test('the last turn queued, given back after a stall, is still given back', async () => {
  const take = limit('stalled-last', 2);
  const first = await take();
  const scopeA = createAbortScope();
  const a = take(scopeA);
  spin(300);
  await sleep(20);
  scopeA.abort();
  expect(await a).toBeInstanceOf(Error);
  const next = await take();
  // The next turn takes A's time, ~500 ms after the first (~1 s had A's turn stayed spent).
  expect((next as number) - (first as number)).toBeGreaterThanOrEqual(400);
  expect((next as number) - (first as number)).toBeLessThan(800);
});
