import { Redis } from 'ioredis';
import { createToolRates, createToolSlots } from '../../src/guards';
import { createSlotWakeups } from '../../src/guards/slot-wakeups';
import type { ConcurrencyPolicy } from '../../src/guards/policy-types';
import { createAbortScope, type TurnContext } from '../../src/pipeline';
import { gated } from '../../src/pipeline/gated';
import { connectRedis } from '../../src/store/redis';
import { startRedis, type TestRedis } from '../helpers/redis-server';

// The leases of shared concurrency caps against a real redis-server: what a slow Redis, a
// cancelled client and a rate wait leave behind.

jest.setTimeout(30_000);

let redis: TestRedis;
const clients: Redis[] = [];
const client = () => {
  const c = new Redis(redis.url, { maxRetriesPerRequest: 0, enableOfflineQueue: false, lazyConnect: false });
  clients.push(c);
  return c;
};
beforeAll(async () => (redis = await startRedis({ own: true })));
afterAll(async () => {
  for (const c of clients) c.disconnect();
  await redis.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cap = (name: string, waitMs = 0): ConcurrencyPolicy => ({ match: [name], maxInFlight: 1, waitMs, shared: true, fallbackMaxInFlight: 1, failClosed: false });
const ready = async (c: Redis) => {
  while (c.status !== 'ready') await sleep(10);
  return c;
};
const leasesOf = (tool: string) => Number(redis.cli('ZCARD', `dispatch:slots:{${tool}}`).trim());

test('a take whose answer came too late gives its lease back: the cap is free once the only call ends', async () => {
  const tool = { tenant: '', name: 'late', timeoutMs: 20_000 };
  const slots = createToolSlots([cap('late')], { redis: await ready(client()), timeoutMs: 100 })!;
  redis.signal('SIGSTOP');
  let release;
  try {
    // Redis takes the slot only after the 100 ms timeout: the call falls back to this replica's slot.
    const taking = slots.take(tool, createAbortScope().signal, Date.now() + 60_000);
    await sleep(300);
    release = await taking;
  } finally {
    redis.signal('SIGCONT');
  }
  release!();
  await sleep(200);
  // Before: the lease taken late stayed for the tool's timeout + 5 s, and every replica was refused.
  expect(leasesOf('late')).toBe(0);
  const next = await slots.take(tool, createAbortScope().signal, Date.now() + 60_000);
  expect(typeof next).toBe('function');
  next!();
});

test('a take its client cancelled while Redis answered gives the slot back at once', async () => {
  const tool = { tenant: '', name: 'dropped', timeoutMs: 20_000 };
  const slots = createToolSlots([cap('dropped')], { redis: await ready(client()), timeoutMs: 2_000 })!;
  const scope = createAbortScope();
  redis.signal('SIGSTOP');
  let taking;
  try {
    taking = Promise.resolve(slots.take(tool, scope.signal, Date.now() + 60_000));
    await sleep(100);
    scope.abort();
  } finally {
    redis.signal('SIGCONT');
  }
  await expect(taking).rejects.toThrow(/cancel/i);
  await sleep(100);
  expect(leasesOf('dropped')).toBe(0);
});

test("a slot held while its attempt waits for a rate turn is leased for that wait too, and no take shortens a longer lease", async () => {
  const tool = { tenant: '', name: 'paced', timeoutMs: 100 };
  const slots = createToolSlots([cap('paced', 10_000)], { redis: await ready(client()) })!;
  const rates = createToolRates([{ match: ['paced'], perSecond: 1, burst: 1, waitMs: 20_000, shared: false, text: '1 call per second' }])!;
  const turn = { signal: createAbortScope().signal, deadline: Date.now() + 60_000 } as TurnContext;
  const refuse = (error: unknown) => {
    throw error;
  };
  const other = createToolSlots([{ ...cap('paced'), maxInFlight: 2 }], { redis: await ready(client()) })!;
  let leaseMs = 0;
  let setTtl = 0;
  let ttlAfterShort = 0;
  await gated(slots, rates, tool as never, turn, async () => {
    const [, score] = redis.cli('ZRANGE', 'dispatch:slots:{paced}', '0', '-1', 'WITHSCORES').trim().split('\n');
    const [seconds, micros] = redis.cli('TIME').trim().split('\n');
    leaseMs = Number(score) - (Number(seconds) * 1000 + Number(micros) / 1000);
    setTtl = Number(redis.cli('PTTL', 'dispatch:slots:{paced}').trim());
    // A shorter lease taken meanwhile (no rate wait: a replica with another policy, a rolling
    // deploy) must not shorten the set's life under the longer one.
    const short = await other.take(tool, turn.signal, turn.deadline);
    ttlAfterShort = Number(redis.cli('PTTL', 'dispatch:slots:{paced}').trim());
    short!();
    return undefined as never;
  }, refuse);
  // 20 s of rate wait allowed + 100 ms timeout + 5 s margin (the lease was 5.1 s before).
  expect(leaseMs).toBeGreaterThan(24_000);
  expect(setTtl).toBeGreaterThan(24_000);
  expect(ttlAfterShort).toBeGreaterThan(24_000);
});

test('a slot given back wakes one waiting call of a replica (the first in line), not all of them', async () => {
  const tool = { tenant: '', name: 'crowded', timeoutMs: 20_000 };
  const wakeups = createSlotWakeups({ connect: () => connectRedis(redis.url, { queueWhileDown: true }) });
  const c = await ready(client());
  const slots = createToolSlots([cap('crowded', 20_000)], { redis: c, wakeups })!;
  // Tries of take-slot.lua, counted on this replica's connection.
  let tries = 0;
  const take = c.dispatchTakeSlot.bind(c);
  c.dispatchTakeSlot = (...args: Parameters<typeof take>) => (tries++, take(...args));
  const signal = createAbortScope().signal;
  const deadline = Date.now() + 60_000;
  const first = (await slots.take(tool, signal, deadline)) as () => void;
  const order: number[] = [];
  const waiting = Array.from({ length: 8 }, (_, i) => Promise.resolve(slots.take(tool, signal, deadline)).then((release) => (order.push(i), release!)));
  // Long enough for every waiter's timer to reach its 1 s pause.
  await sleep(2_500);
  try {
    tries = 0;
    first();
    const release = await Promise.race(waiting);
    const afterRelease = tries;
    // Each of the 8 tried once at the release before; now the first in line does (a timer of one
    // of the others may fall in the same moments: at most a few more).
    expect(order).toEqual([0]);
    expect(afterRelease).toBeLessThanOrEqual(3);
    release();
    // And so on down the line, in order.
    for (let i = 1; i < 8; i++) (await waiting[i]!)();
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  } finally {
    await wakeups.close();
  }
});

test('a call whose wait Redis fails in the middle of waits locally only for what is left of it', async () => {
  const tool = { tenant: '', name: 'midway', timeoutMs: 20_000 };
  const slots = createToolSlots([cap('midway', 1_000)], { redis: await ready(client()), timeoutMs: 200 })!;
  const signal = createAbortScope().signal;
  const deadline = Date.now() + 60_000;
  const first = (await slots.take(tool, signal, deadline)) as () => void;
  const asked = Date.now();
  const waiting = Promise.resolve(slots.take(tool, signal, deadline)).then(
    () => 'granted',
    () => Date.now() - asked,
  );
  await sleep(300);
  await redis.stop();
  try {
    // With Redis away, a new call takes this replica's own slot; the waiting one then falls back
    // to it too, and is refused at the end of the 1 s it was allowed (not 1 s after falling back).
    const local = (await slots.take(tool, signal, deadline)) as () => void;
    const refusedAfter = await waiting;
    expect(refusedAfter).not.toBe('granted');
    expect(refusedAfter).toBeGreaterThanOrEqual(900);
    expect(refusedAfter).toBeLessThan(1_250);
    local();
  } finally {
    await redis.start();
  }
  first();
});

test('thousands of waiting calls gone at once (their replica died) are cleared, and the cap works on', async () => {
  const tool = { tenant: '', name: 'crowd', timeoutMs: 20_000 };
  const key = 'dispatch:slots:{crowd}';
  const seed = await ready(client());
  // 20,000 calls waited in line and stopped trying a minute ago: more than Lua can unpack at once.
  const gone = 20_000;
  const past = Date.now() - 60_000;
  const line: (string | number)[] = [];
  const alive: (string | number)[] = [];
  for (let i = 0; i < gone; i++) {
    line.push(i, `dead${i}`);
    alive.push(past, `dead${i}`);
  }
  await seed.zadd(`${key}:line`, ...line);
  await seed.zadd(`${key}:alive`, ...alive);
  const slots = createToolSlots([{ ...cap('crowd'), failClosed: true }], { redis: seed, timeoutMs: 2_000 })!;
  // Before: 'too many results to unpack' on every take, the dead line kept (fail_closed: refused).
  const release = await slots.take(tool, createAbortScope().signal, Date.now() + 60_000);
  expect(typeof release).toBe('function');
  expect(Number(redis.cli('ZCARD', `${key}:line`).trim())).toBe(0);
  expect(Number(redis.cli('ZCARD', `${key}:alive`).trim())).toBe(0);
  release!();
});
