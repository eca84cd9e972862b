import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { buildApp, type App } from '../../src/app';
import { createDispatchClient, createRegistryClient } from '../../src/client';
import { parseConfig } from '../../src/config';
import { SILENT_LOGGER } from '../../src/log';
import { startRedisCluster, type TestRedisCluster } from '../helpers/redis-server';
import { startToolServer, type ToolServer } from '../helpers/servers';

jest.setTimeout(60_000);

interface TestApp {
  readonly app: App;
  readonly dispatch: ReturnType<typeof createDispatchClient>;
  readonly registry: ReturnType<typeof createRegistryClient>;
}

/** The whole app (every plugin: store, events relay, worker relay) on a Redis Cluster. */
async function startStoreApp(redisUrl: string): Promise<TestApp> {
  const app = await buildApp(parseConfig('tools: []', 'test.yaml'), { redisUrl, logger: SILENT_LOGGER });
  const { port } = await app.listen('127.0.0.1:0');
  return { app, dispatch: createDispatchClient(`127.0.0.1:${port}`), registry: createRegistryClient(`127.0.0.1:${port}`) };
}

let cluster: TestRedisCluster;
let tools: ToolServer;
let apps: TestApp[] = [];
let sent = 0;

beforeAll(async () => {
  cluster = await startRedisCluster(3);
  tools = await startToolServer({ '/send': (_req, res) => void res.writeHead(200).end(`sent #${++sent}`) });
  apps = await Promise.all([0, 1].map(() => startStoreApp(cluster.url)));
});

afterAll(async () => {
  for (const { app, dispatch, registry } of apps) {
    dispatch.close();
    registry.close();
    await app.close(500);
  }
  await tools?.close();
  await cluster?.close();
});

test('on Redis Cluster, replicas share registered tools and idempotency records', async () => {
  const [a, b] = apps as [TestApp, TestApp];
  await a.registry.registerTools({ tools: [{ name: 'send', effect: Effect.SIDE_EFFECT, inputSchema: '{"type":"object"}', executor: { case: 'http', value: { url: `${tools.url}/send` } } }] });
  const deadline = Date.now() + 5000;
  while (!(await b.registry.listTools({})).tools.some((t) => t.name === 'send') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const results = [];
  for (let i = 0; i < 6; i++) {
    const app = i % 2 === 0 ? b : a;
    results.push((await app.dispatch.dispatch({ sessionId: `s${i % 3}`, calls: [{ id: `c${i}`, name: 'send', arguments: '{"to":"x"}' }] })).results[0]!);
  }
  expect(results.map((r) => [r.isError, r.idempotentReplay])).toEqual([
    [false, false],
    [false, false],
    [false, false],
    [false, true],
    [false, true],
    [false, true],
  ]);
  expect(tools.count('/send')).toBe(3);
  expect(results[3]!.output).toBe(results[0]!.output);
});

test('on Redis Cluster, a tool registered and removed at once on one replica ends removed on the other', async () => {
  const [a, b] = apps as [TestApp, TestApp];
  const spec = (n: number) => ({ name: `flip_${n}`, effect: Effect.READ_ONLY, inputSchema: '{"type":"object"}', executor: { case: 'http' as const, value: { url: `${tools.url}/send` } } });
  // The two announcements of each tool must reach b in the order they were sent.
  for (let n = 0; n < 10; n++) {
    await a.registry.registerTools({ tools: [spec(n)] });
    await a.registry.removeTool({ name: `flip_${n}` });
  }
  await a.registry.registerTools({ tools: [spec(99)] });
  const deadline = Date.now() + 5000;
  while (!(await b.registry.listTools({})).tools.some((t) => t.name === 'flip_99') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  expect((await b.registry.listTools({})).tools.map((t) => t.name).filter((name) => name.startsWith('flip_'))).toEqual(['flip_99']);
});
