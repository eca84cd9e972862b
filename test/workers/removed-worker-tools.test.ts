import { Redis } from 'ioredis';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startWorkerApp, type WorkerApp } from './worker-app';
import { echoAnswer, eventually } from './worker-harness';

const tool = { name: 'wtool', inputSchema: '{"type":"object"}', effect: Effect.READ_ONLY };
const names = async (t: WorkerApp) => (await t.registry.listTools({})).tools.map((x) => x.name);

describe.each([
  ['every plugin (Redis store too)', false],
  ['the executors plugin alone', true],
])('a worker tool removed by RemoveTool, replicas sharing Redis, with %s', (_assembly, only) => {
  let redis: TestRedis;
  const apps: WorkerApp[] = [];
  const start = async () => {
    const app = await startWorkerApp({ advertiseIntervalMs: 200, routeTtlMs: 1_000 }, { redisUrl: redis.url, only });
    apps.push(app);
    return app;
  };
  beforeAll(async () => {
    redis = await startRedis({ own: true });
  });
  afterAll(() => redis.close());
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
    const flush = new Redis(redis.url);
    await flush.flushall();
    flush.disconnect();
  });

  it('stays removed on the other replicas and on those started after, and a worker can host it again', async () => {
    const a = await start();
    const b = await start();
    const first = await a.worker({ id: 'w1', tools: [tool], answer: echoAnswer('w1') });
    await eventually(async () => (await names(b)).includes('wtool'), 5_000, 'the tool on replica b');
    first.disconnect();
    await expect(a.registry.removeTool({ name: 'wtool' })).resolves.toMatchObject({ removed: true });
    expect(await names(a)).toEqual([]);
    await eventually(async () => (await names(b)).length === 0, 5_000, 'the removal on replica b');

    const c = await start();
    expect(await names(c)).toEqual([]);

    await a.worker({ id: 'w2', tools: [tool], answer: echoAnswer('w2') });
    await eventually(async () => (await names(c)).includes('wtool'), 5_000, 'the tool hosted again, on replica c');
    const result = (await c.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c1', name: 'wtool', arguments: '{"n":1}' }] })).results[0]!;
    expect(result.isError).toBe(false);
    expect(JSON.parse(result.output)).toEqual({ worker: 'w2', args: { n: 1 } });
  }, 30_000);
});
