import { Redis } from 'ioredis';
import { createToolSlots } from '../../src/guards';
import type { ConcurrencyPolicy } from '../../src/guards/policy-types';
import { createAbortScope } from '../../src/pipeline';
import { startRedis, type TestRedis } from '../helpers/redis-server';

// A call refused at the end of its wait for a shared slot leaves the line at once (docs/policies.md,
// "Concurrency caps"): its place must not hold up the calls after it.

jest.setTimeout(30_000);

let redis: TestRedis;
const clients: Redis[] = [];
const client = async () => {
  const c = new Redis(redis.url, { maxRetriesPerRequest: 0, enableOfflineQueue: false });
  clients.push(c);
  while (c.status !== 'ready') await new Promise((r) => setTimeout(r, 10));
  return c;
};
beforeAll(async () => (redis = await startRedis({ own: true })));
afterAll(async () => {
  for (const c of clients) c.disconnect();
  await redis.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cap = (name: string, waitMs: number): ConcurrencyPolicy => ({ match: [name], maxInFlight: 1, waitMs, shared: true, fallbackMaxInFlight: 1, failClosed: false });
const lineOf = (tool: string) => Number(redis.cli('ZCARD', `dispatch:slots:{${tool}}:line`).trim());

test('a call refused at the end of its wait leaves the line: the next call takes the slot freed just after', async () => {
  const tool = { tenant: '', name: 'ghost', timeoutMs: 20_000 };
  const waiting = createToolSlots([cap('ghost', 300)], { redis: await client() })!;
  const eager = createToolSlots([cap('ghost', 0)], { redis: await client() })!;
  const signal = createAbortScope().signal;
  const held = (await waiting.take(tool, signal, Date.now() + 60_000)) as () => void;
  // Waits its 300 ms in line, then is refused: the slot stayed held.
  await expect(Promise.resolve(waiting.take(tool, signal, Date.now() + 60_000))).rejects.toThrow(/stayed at its limit/);
  held();
  await sleep(100);
  // Before: the refused call kept its place up to 3 s (KEEP_IN_LINE_MS), first in line, and a call
  // that may not wait was refused although no slot was held.
  expect(lineOf('ghost')).toBe(0);
  const next = eager.take(tool, signal, Date.now() + 60_000);
  expect(typeof (await next)).toBe('function');
  (await next)!();
});
