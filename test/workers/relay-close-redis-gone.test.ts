// With the relay's Redis gone (killed), app.close() took 1-2 s (a QUIT queued behind the route
// withdrawals, each waited for up to publishStallMs) and left ioredis's 2 s disconnect timer
// behind, its connections never ended: jest warned "A worker process has failed to exit
// gracefully". It now ends at once and leaves nothing of its own running.
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { watchResources } from '../helpers/left-running';
import { startWorkerApp } from './worker-app';
import { echoAnswer } from './worker-harness';

jest.setTimeout(20_000);

let redis: TestRedis;
beforeEach(async () => {
  redis = await startRedis({ own: true });
});
afterEach(() => redis.close());

const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

for (const when of ['while it reconnects', 'right after it was killed', 'before the app started']) {
  test(`an app whose relay's Redis was killed closes within 500 ms and leaves no timer or socket behind (${when})`, async () => {
    await settle();
    if (when === 'before the app started') await redis.stop();
    const watched = watchResources();
    // Started with Redis away, the app waits 2 s for the relay's subscription, then serves.
    const app = await startWorkerApp({ advertiseIntervalMs: 200 }, { redisUrl: redis.url, only: true });
    // A hosted tool: its route is withdrawn on close (a command queued while Redis is away).
    await app.worker({ id: 'w', tools: [{ name: 'w_read', inputSchema: '{"type":"object"}', effect: Effect.READ_ONLY }], answer: echoAnswer('w') });
    await redis.stop();
    if (when === 'while it reconnects') await new Promise((resolve) => setTimeout(resolve, 300));
    const started = Date.now();
    await app.close();
    expect(Date.now() - started).toBeLessThan(500);
    await settle();
    expect(watched.left()).toEqual([]);
  });
}
