import { buildApp } from '../../src/app';
import { PLUGINS } from '../../src/app/plugins';
import { createExecutorsPlugin, executorsPlugin } from '../../src/app/plugins/executors-plugin';
import type { PluginFactory } from '../../src/app/plugin';
import { createDispatchClient, createRegistryClient } from '../../src/client';
import { parseConfig } from '../../src/config';
import type { WorkerOptions } from '../../src/executors/worker';
import { SILENT_LOGGER, type Logger } from '../../src/log';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startWorker, type TestWorker, type TestWorkerOptions } from './worker-harness';

/** The full app with worker options for tests, its clients, and a way to connect workers. */
export type WorkerApp = Awaited<ReturnType<typeof startWorkerApp>>;

/** Starts dispatch (every plugin, or only the executors plugin) with short worker bounds. */
export async function startWorkerApp(worker: WorkerOptions = {}, extra: { redisUrl?: string; only?: boolean; plugins?: PluginFactory[]; yaml?: string; logger?: Logger } = {}) {
  const plugin = createExecutorsPlugin({ worker: { sweepIntervalMs: 100, ...worker } });
  const factories = extra.only ? [plugin, ...(extra.plugins ?? [])] : [...PLUGINS.map((f) => (f === executorsPlugin ? plugin : f)), ...(extra.plugins ?? [])];
  const app = await buildApp(parseConfig(extra.yaml ?? '', 'test.yaml'), { logger: extra.logger ?? SILENT_LOGGER, redisUrl: extra.redisUrl }, factories);
  const server = await app.listen('127.0.0.1:0');
  const address = `127.0.0.1:${server.port}`;
  const dispatch = createDispatchClient(address);
  const registry = createRegistryClient(address);
  let registrations = 0;
  app.deps.registry.onChange((change) => {
    if (change.type === 'register') registrations++;
  });
  const workers: TestWorker[] = [];
  return {
    app,
    address,
    dispatch,
    registry,
    /** Starts a worker and waits until dispatch has registered its tools. */
    async worker(options: TestWorkerOptions): Promise<TestWorker> {
      const before = registrations;
      const worker = startWorker(address, options);
      workers.push(worker);
      const deadline = Date.now() + 5_000;
      while (registrations === before) {
        if (Date.now() > deadline) throw new Error(`worker ${options.id} was not registered`);
        await new Promise((r) => setTimeout(r, 10));
      }
      return worker;
    },
    async close() {
      for (const w of workers) w.disconnect();
      dispatch.close();
      registry.close();
      await app.close(200);
    },
  };
}

/** Replicas `a` and `b` (startWorkerApp) sharing a private redis-server. */
export interface ReplicaPair {
  readonly redis: TestRedis;
  readonly a: WorkerApp;
  readonly b: WorkerApp;
}

/** Starts a ReplicaPair before the tests of the calling file or describe, and closes it after them. */
export function replicasSharingRedis(worker: WorkerOptions = {}, extra: { only?: boolean; yaml?: string; aUser?: string } = {}): ReplicaPair {
  const pair: Partial<{ -readonly [K in keyof ReplicaPair]: ReplicaPair[K] }> = {};
  const { aUser, ...options } = extra;
  beforeAll(async () => {
    pair.redis = await startRedis({ own: true });
    // `a` as an ACL user of its own (every right, password `${aUser}-secret`), whose rules a test can change.
    if (aUser) pair.redis.cli('ACL', 'SETUSER', aUser, 'on', `>${aUser}-secret`, '~*', '&*', '+@all');
    pair.a = await startWorkerApp(worker, { ...options, redisUrl: aUser ? `redis://${aUser}:${aUser}-secret@127.0.0.1:${pair.redis.port}` : pair.redis.url });
    pair.b = await startWorkerApp(worker, { ...options, redisUrl: pair.redis.url });
  });
  afterAll(async () => {
    await pair.a?.close();
    await pair.b?.close();
    await pair.redis?.close();
  });
  return {
    get redis() {
      return pair.redis!;
    },
    get a() {
      return pair.a!;
    },
    get b() {
      return pair.b!;
    },
  };
}
