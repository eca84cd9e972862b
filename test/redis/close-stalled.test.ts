import { createEventBus, createRedisRelay as createEventRelay } from '../../src/events';
import { createRedisRelay as createWorkerRelay } from '../../src/executors/worker/redis-relay';
import { resolveWorkerOptions } from '../../src/executors/worker/worker-options';
import type { WorkerPool } from '../../src/executors/worker/worker-pool';
import { SILENT_LOGGER } from '../../src/log';
import type { ToolRegistry } from '../../src/registry';
import { connectRedis } from '../../src/store/redis';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { until } from '../helpers/until';

// The relays' connections queue while Redis is away, with no command timeout: closing them while
// a real standalone Redis is stopped (SIGSTOP) must not wait for it to come back.

jest.setTimeout(30_000);

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis({ own: true });
});
afterAll(async () => {
  await redis?.close();
});

/** How long `close` took while Redis was stopped, or undefined when it had not ended within 5 s. */
async function closeWhileStopped(close: () => Promise<void>): Promise<number | undefined> {
  redis.signal('SIGSTOP');
  try {
    const started = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const ended = await Promise.race([close().then(() => true), new Promise<false>((r) => (timer = setTimeout(() => r(false), 5_000)))]);
    clearTimeout(timer);
    return ended ? Date.now() - started : undefined;
  } finally {
    redis.signal('SIGCONT');
  }
}

test('the event relay closes within its bounds while Redis is stopped', async () => {
  const bus = createEventBus();
  const relay = createEventRelay({ bus, connect: () => connectRedis(redis.url, { queueWhileDown: true }), logger: SILENT_LOGGER, publishStallMs: 300, probeIntervalMs: 300 });
  // Subscribed and publishing: its interest channel has a subscriber, and its probes went out.
  await until(() => (redis.cli('pubsub', 'numsub', 'dispatch:events:interest').trim().split('\n')[1] === '1' ? true : undefined), 'the relay subscribed');
  await new Promise((r) => setTimeout(r, 700));
  const took = await closeWhileStopped(() => relay.close());
  expect(took).toBeDefined();
  expect(took).toBeLessThan(1_500);
});

test('the worker relay closes within its bounds while Redis is stopped, its routes withdrawn or left to lapse', async () => {
  const registry = { lookup: () => undefined, applyRemote: () => undefined } as unknown as ToolRegistry;
  const pool = { hosted: () => [{ tenant: 't', tool: 'x_close' }], assign: async () => 'done', onHostedChange: () => undefined } as unknown as WorkerPool;
  const options = resolveWorkerOptions({ publishStallMs: 300, probeIntervalMs: 300 });
  const relay = await createWorkerRelay({ url: redis.url, pool, registry, logger: SILENT_LOGGER, options });
  await new Promise((r) => setTimeout(r, 700));
  const took = await closeWhileStopped(() => relay.close());
  expect(took).toBeDefined();
  // The withdrawal's bound, then QUIT's.
  expect(took).toBeLessThan(2_000);
});
