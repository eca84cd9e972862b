import { connectRedis, whenReady } from '../../src/store/redis';
import type { Logger } from '../../src/log';
import { startRedis, type TestRedis } from '../helpers/redis-server';

// A connection its owner closes (dispatchd stopping) is not "lost": no warning. Every clean
// shutdown logged "redis connection lost; reconnecting" for each of its connections.

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis({ own: true });
});
afterAll(() => redis?.close());

function recording(): { logger: Logger; warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, logger: { debug() {}, info() {}, warn: (message) => void warnings.push(message), error() {} } };
}

test.each(['quit', 'disconnect'] as const)('a connection closed by %s logs no loss', async (how) => {
  const { logger, warnings } = recording();
  const client = connectRedis(redis.url, { logger });
  expect(await whenReady(client, 5_000)).toBe(true);
  if (how === 'quit') await client.quit();
  else client.disconnect();
  await new Promise((r) => setTimeout(r, 100));
  expect(warnings).toEqual([]);
});

test('a connection Redis drops is still reported lost', async () => {
  const { logger, warnings } = recording();
  const client = connectRedis(redis.url, { logger });
  try {
    expect(await whenReady(client, 5_000)).toBe(true);
    await redis.stop();
    await redis.start();
    expect(await whenReady(client, 10_000)).toBe(true);
    expect(warnings).toContain('redis connection lost; reconnecting');
  } finally {
    client.disconnect();
  }
});
