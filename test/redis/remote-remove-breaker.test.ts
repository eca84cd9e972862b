import { Redis } from 'ioredis';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { registryKeys } from '../../src/store/redis';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp, startToolServer, type ToolServer } from '../helpers/servers';
import { metricsPortLogger } from '../telemetry/metrics-app';
import { eventually } from '../workers/worker-harness';

// A tool removed on another replica takes its breaker with it here too. The registry replica
// applied the removal (ToolRegistry.applyRemote) without telling anyone: replica b kept the
// removed tool's open breaker, so the name registered again on a, same spec, backend healthy
// again, was refused BREAKER_OPEN on b; b's dispatch_breaker_state kept saying open. Two full
// apps over real gRPC on a private redis-server, a real HTTP tool, b's real /metrics.

jest.setTimeout(30_000);

type App = Awaited<ReturnType<typeof startApp>>;
let redis: TestRedis;
let tools: ToolServer;
let a: App;
let b: App;
const bMetrics = metricsPortLogger();
let down = true;

beforeAll(async () => {
  redis = await startRedis({ own: true });
  tools = await startToolServer({ '/flaky': (_req, res) => void (down ? res.writeHead(503).end('down') : res.writeHead(200).end('fine')) });
  a = await startApp('tools: []\n', { redisUrl: redis.url });
  b = await startApp('tools: []\n', { redisUrl: redis.url, logger: bMetrics.logger, metricsListen: '127.0.0.1:0' });
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await tools?.close();
  await redis?.close();
});

const spec = (name: string) => ({ name, effect: Effect.READ_ONLY, inputSchema: '{"type":"object"}', retry: { maxAttempts: 1 }, executor: { case: 'http' as const, value: { url: `${tools.url}/flaky`, headers: {} } } });
const namesOn = async (app: App) => (await app.registry.listTools({})).tools.map((t) => t.name);
let n = 0;
const callOn = async (app: App, name: string) => (await app.dispatch.dispatch({ sessionId: `s${++n}`, calls: [{ id: 'c', name, arguments: JSON.stringify({ n }) }] })).results[0]!;
const kindOf = (result: Awaited<ReturnType<typeof callOn>>) => (result.error ? ErrorKind[result.error.kind] : 'ok');
const gaugeOnB = async (tool: string) => (await bMetrics.scrape()).value('dispatch_breaker_state', { tenant: 'default', tool });

/** Registers the tool `name` on a, waits for b to hold it, and opens its breaker on b (five 503s). */
async function openOnB(name: string): Promise<void> {
  down = true;
  await a.registry.registerTools({ tools: [spec(name)], replace: true });
  await eventually(async () => (await namesOn(b)).includes(name), 5_000, 'the tool on replica b');
  for (let i = 0; i < 5; i++) expect(kindOf(await callOn(b, name))).toBe('TOOL_ERROR');
  expect(kindOf(await callOn(b, name))).toBe('BREAKER_OPEN');
  expect(await gaugeOnB(name)).toBe(2);
}

/** Removes the tool on a and waits until b no longer holds it. */
async function removeOnA(name: string): Promise<void> {
  expect((await a.registry.removeTool({ name })).removed).toBe(true);
  await eventually(async () => !(await namesOn(b)).includes(name), 5_000, 'the removal on replica b');
}

test('removed on a and registered again there (same spec, backend healthy again), the tool is served on b with a closed breaker', async () => {
  await openOnB('flaky');
  await removeOnA('flaky');
  down = false;
  await a.registry.registerTools({ tools: [spec('flaky')] });
  await eventually(async () => (await namesOn(b)).includes('flaky'), 5_000, 'the tool registered again on replica b');
  const hits = tools.count('/flaky');
  const result = await callOn(b, 'flaky');
  expect(kindOf(result)).toBe('ok');
  expect(result.output).toBe('fine');
  expect(tools.count('/flaky')).toBe(hits + 1);
  expect([undefined, 0]).toContain(await gaugeOnB('flaky'));
});

test("b's breaker gauge no longer lists a tool removed on a", async () => {
  await openOnB('gone');
  await removeOnA('gone');
  const scrape = await bMetrics.scrape();
  expect(scrape.samples.filter((s) => s.name === 'dispatch_breaker_state' && s.labels.tool === 'gone')).toEqual([]);
  expect(scrape.types.dispatch_breaker_state).toBe('gauge');
});

test("a removal b reads after the tool was registered again (its spec stored again) still resets b's breaker", async () => {
  await openOnB('again');
  // What b hears when a removed the tool and registered it again before b read the tenant's hash:
  // the removal's announcement, with the spec stored.
  const client = new Redis(redis.url);
  try {
    expect(await client.hexists(registryKeys().tools('default'), 'again')).toBe(1);
    await client.publish(registryKeys().channel, JSON.stringify({ origin: 'replica-a', type: 'remove', tenant: 'default', name: 'again' }));
  } finally {
    client.disconnect();
  }
  down = false;
  const hits = tools.count('/flaky');
  // Within 3 s, far inside the breaker's 30 s before a probe.
  await eventually(async () => kindOf(await callOn(b, 'again')) === 'ok', 3_000, 'a call of the tool served on replica b');
  expect(tools.count('/flaky')).toBe(hits + 1);
  expect(await namesOn(b)).toContain('again');
});

test('a tool replaced on a with a changed spec keeps its breaker on b, as a replacement does on the replica that made it', async () => {
  await openOnB('changed');
  down = false;
  await a.registry.registerTools({ tools: [{ ...spec('changed'), description: 'changed' }], replace: true });
  await eventually(async () => (await b.registry.listTools({})).tools.some((t) => t.name === 'changed' && t.description === 'changed'), 5_000, 'the changed spec on replica b');
  expect(kindOf(await callOn(b, 'changed'))).toBe('BREAKER_OPEN');
  expect(await gaugeOnB('changed')).toBe(2);
});
