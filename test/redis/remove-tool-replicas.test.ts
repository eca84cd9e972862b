import * as grpc from '@grpc/grpc-js';
import { Redis } from 'ioredis';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { registryKeys } from '../../src/store/redis';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startWorkerApp, type WorkerApp } from '../workers/worker-app';
import { echoAnswer, eventually } from '../workers/worker-harness';

const STORE_TIMEOUT_MS = 1_000;
const DELAY_MS = 150;
const tool = { name: 'wtool', inputSchema: '{"type":"object"}', effect: Effect.READ_ONLY };
const names = async (t: WorkerApp) => (await t.registry.listTools({})).tools.map((x) => x.name);
const callOn = async (t: WorkerApp) => (await t.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c1', name: 'wtool', arguments: '{"n":1}' }] })).results[0]!;

/** A loopback proxy to `port` holding every byte its clients send for `ms` (replies pass at once). */
async function startDelayProxy(port: number, ms: number): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(port, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => (sockets.delete(s), client.destroy(), upstream.destroy()));
      s.on('error', () => undefined);
    }
    client.on('data', (chunk: Buffer) => void setTimeout(() => upstream.write(chunk), ms));
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `redis://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: () => new Promise((resolve) => (sockets.forEach((s) => s.destroy()), server.close(() => resolve()))),
  };
}

const statusOf = (promise: Promise<unknown>) => promise.then(() => grpc.status.OK, (error: grpc.ServiceError) => error);

// RemoveTool of a worker-hosted tool answers once its removal is in Redis (the worker specs, and
// with the store the tenants' tools) and announced; UNAVAILABLE when it cannot be, the tool then
// left registered here so that RemoveTool can be asked again. Replica a reaches Redis through a
// proxy holding its commands for DELAY_MS, so that a removal answered before its writes reach
// Redis is still there when the test reads Redis right after; b's connections are direct. The
// other replica removes the tool as the announcement reaches it, which pub/sub does not order
// against the answer to RemoveTool: b is awaited.
describe.each([
  ['every plugin (Redis store too)', false],
  ['the executors plugin alone', true],
])('RemoveTool of a worker tool, two replicas sharing Redis, with %s', (_assembly, only) => {
  let redis: TestRedis;
  let a: WorkerApp;
  let b: WorkerApp;
  let proxy: Awaited<ReturnType<typeof startDelayProxy>>;
  const stored = async () => {
    const client = new Redis(redis.url);
    try {
      const [spec, tool] = await Promise.all([client.hexists('dispatch:worker:specs', 'default\nwtool'), client.hexists(registryKeys().tools('default'), 'wtool')]);
      return spec + tool;
    } finally {
      client.disconnect();
    }
  };

  beforeAll(async () => {
    redis = await startRedis({ own: true });
  });
  afterAll(() => redis.close());
  beforeEach(async () => {
    const yaml = `limits: { store_timeout_ms: ${STORE_TIMEOUT_MS} }`;
    proxy = await startDelayProxy(redis.port, DELAY_MS);
    [a, b] = await Promise.all([proxy.url, redis.url].map((redisUrl) => startWorkerApp({}, { redisUrl, only, yaml })));
    await a.worker({ id: 'w1', tools: [tool], answer: echoAnswer('w1') });
    await eventually(async () => (await names(b)).includes('wtool'), 5_000, 'the tool on replica b');
    expect((await callOn(b)).isError).toBe(false);
    expect(await stored()).toBe(only ? 1 : 2);
  });
  /** RemoveTool on replica a answers once Redis holds the tool no more; b then removes it too. */
  const removeEverywhere = async (removed: unknown) => {
    await expect(a.registry.removeTool({ name: 'wtool' })).resolves.toMatchObject({ removed });
    expect(await stored()).toBe(0);
    expect(await names(a)).toEqual([]);
    await eventually(async () => (await names(b)).length === 0, 2_000, 'the removal on replica b');
    expect(await callOn(b)).toMatchObject({ isError: true, error: { kind: ErrorKind.UNKNOWN_TOOL } });
  };
  afterEach(async () => {
    redis.cli('CONFIG', 'SET', 'min-replicas-to-write', '0');
    await Promise.all([a, b].map((app) => app.close()));
    await proxy.close();
    redis.cli('FLUSHALL');
  });

  it('answers once the removal is in Redis, and the other replica then removes the tool', async () => {
    await removeEverywhere(true);
  }, 30_000);

  it('answers UNAVAILABLE when Redis refuses the removal, removes nothing, and removes it when asked again', async () => {
    redis.cli('CONFIG', 'SET', 'min-replicas-to-write', '1');
    const refused = await statusOf(a.registry.removeTool({ name: 'wtool' }));
    expect(refused).toMatchObject({ code: grpc.status.UNAVAILABLE });
    expect((refused as grpc.ServiceError).details).toMatch(/^tool "wtool" was not removed: its removal could not be written to Redis \(.*NOREPLICAS.*\); it is still registered, call RemoveTool again$/);
    expect(await names(a)).toEqual(['wtool']);
    expect(await stored()).toBe(only ? 1 : 2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await names(b)).toEqual(['wtool']);
    expect((await callOn(b)).isError).toBe(false);

    redis.cli('CONFIG', 'SET', 'min-replicas-to-write', '0');
    await removeEverywhere(true);
  }, 30_000);

  it('answers UNAVAILABLE within the store timeout while Redis does not answer; asked again once it does, the tool is removed everywhere', async () => {
    redis.signal('SIGSTOP');
    const started = Date.now();
    let timedOut: grpc.ServiceError | grpc.status;
    try {
      timedOut = await statusOf(a.registry.removeTool({ name: 'wtool' }));
    } finally {
      redis.signal('SIGCONT');
    }
    expect(Date.now() - started).toBeLessThan(STORE_TIMEOUT_MS + DELAY_MS + 700);
    expect(timedOut).toMatchObject({ code: grpc.status.UNAVAILABLE });
    expect((timedOut as grpc.ServiceError).details).toMatch(/^tool "wtool" was not removed within 1000 ms \(limits.store_timeout_ms\)|^tool "wtool" was not removed: its removal could not be written to Redis \(Command timed out\)/);

    // Removed already, here too, when the first removal reached Redis after its answer.
    await removeEverywhere(expect.any(Boolean));
  }, 30_000);
});
