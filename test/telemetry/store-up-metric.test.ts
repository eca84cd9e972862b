import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp } from '../helpers/servers';
import { metricsPortLogger } from './metrics-app';

// Found by a Helm probe: with Redis unreachable, dispatchd served, both health names SERVING, and
// nothing on /metrics said the store was away until side-effecting calls failed STORE_UNAVAILABLE
// (and only if some came). `dispatch_store_up` is 1 while Redis is connected, 0 while it is not,
// and absent with the in-memory store (no Redis to be away).

jest.setTimeout(60_000);

const TOOLS = 'tools:\n  - { name: echo, effect: read_only, builtin: { name: echo } }\n';
const storeUp = async (scrape: () => Promise<{ samples: { name: string; value: number }[] }>) => (await scrape()).samples.find((s) => s.name === 'dispatch_store_up')?.value;
const until = async (check: () => Promise<boolean>, ms = 15_000) => {
  const deadline = Date.now() + ms;
  while (!(await check()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
};

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis({ own: true });
});
afterAll(() => redis?.close());

test('dispatch_store_up follows Redis: 1, 0 once it is stopped, 1 again once it is back', async () => {
  const metrics = metricsPortLogger();
  const app = await startApp(TOOLS, { logger: metrics.logger, metricsListen: '127.0.0.1:0', redisUrl: redis.url });
  try {
    expect(await storeUp(metrics.scrape)).toBe(1);
    await redis.stop();
    await until(async () => (await storeUp(metrics.scrape)) === 0);
    expect(await storeUp(metrics.scrape)).toBe(0);
    await redis.start();
    await until(async () => (await storeUp(metrics.scrape)) === 1);
    expect(await storeUp(metrics.scrape)).toBe(1);
  } finally {
    await app.close();
  }
});

test('the in-memory store has no such series', async () => {
  const metrics = metricsPortLogger();
  const app = await startApp(TOOLS, { logger: metrics.logger, metricsListen: '127.0.0.1:0' });
  try {
    expect(await storeUp(metrics.scrape)).toBeUndefined();
  } finally {
    await app.close();
  }
});
