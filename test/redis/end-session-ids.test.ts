import { monitorRedis, startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp } from '../helpers/servers';

// EndSession of an id no turn may have (empty, or past the 256 characters Dispatch allows) answers
// OK, as for any unknown session (DESIGN section 2), without a store step: a 1 MB id cost a
// script call with a key of its size, per call. A real id still clears its session.

jest.setTimeout(30_000);

let redis: TestRedis;
let app: Awaited<ReturnType<typeof startApp>>;
beforeAll(async () => {
  redis = await startRedis();
  app = await startApp('tools: []\n', { redisUrl: redis.url });
});
afterAll(async () => {
  await app.close();
  await redis.close();
});

test('an empty or overlong id is answered at once, no script run; a real one runs the end-session script', async () => {
  const monitor = await monitorRedis(redis.port);
  try {
    for (const sessionId of ['', 'x'.repeat(257), 'y'.repeat(1_000_000)]) await expect(app.dispatch.endSession({ sessionId })).resolves.toBeDefined();
    await new Promise((r) => setTimeout(r, 100));
    const none = monitor.commands().filter((c) => c === 'evalsha' || c === 'eval').length;
    await app.dispatch.endSession({ sessionId: 's'.repeat(256) });
    await new Promise((r) => setTimeout(r, 100));
    const one = monitor.commands().filter((c) => c === 'evalsha' || c === 'eval').length;
    expect(none).toBe(0);
    expect(one).toBeGreaterThanOrEqual(1);
  } finally {
    monitor.stop();
  }
});
