import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { connectRedis, type RedisClient } from '../../src/store/redis';
import { statsKeys } from '../../src/telemetry/stats-hash';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp, startToolServer, type ToolServer } from '../helpers/servers';
import { bearer, tokenEntry } from './metrics-app';

// A call that ends after its tool was removed (RemoveTool on another replica, while the tool ran)
// is not counted: before, it put the removed tool back into GetToolStats (this replica's counts
// and the shared hash in Redis), and the name registered again started from that call, not zero.
// Two replicas of the full app over real gRPC, a private Redis and a real HTTP tool.

jest.setTimeout(30_000);

const FLUSH_MS = 50;
const CONFIG = `tools: []\nauth:\n  tokens:\n${tokenEntry('acme', 'tok', ['dispatch', 'admin'])}`;
type App = Awaited<ReturnType<typeof startApp>>;
const savedFlush = process.env.DISPATCH_STATS_FLUSH_MS;
let redis: TestRedis;
let tools: ToolServer;
let a: App;
let b: App;
let probe: RedisClient;
/** Holds the tool's answers while set. */
let gate: Promise<void> | undefined;

beforeAll(async () => {
  process.env.DISPATCH_STATS_FLUSH_MS = String(FLUSH_MS);
  redis = await startRedis({ own: true });
  tools = await startToolServer({
    '/slow': async (_req, res) => {
      await gate;
      res.writeHead(200).end('done');
    },
  });
  probe = connectRedis(redis.url);
  [a, b] = await Promise.all([0, 1].map(() => startApp(CONFIG, { redisUrl: redis.url })));
});
afterAll(async () => {
  if (savedFlush === undefined) delete process.env.DISPATCH_STATS_FLUSH_MS;
  else process.env.DISPATCH_STATS_FLUSH_MS = savedFlush;
  probe?.disconnect();
  await a?.close();
  await b?.close();
  await tools?.close();
  await redis?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not in time: ${what}`);
    await sleep(20);
  }
}

const slow = () => ({ name: 'slow', effect: Effect.READ_ONLY, inputSchema: '{"type":"object"}', executor: { case: 'http' as const, value: { url: `${tools.url}/slow` } } });
const register = (app: App) => app.registry.registerTools({ tools: [slow()] }, bearer('tok'));
const call = async (app: App, n: number) => (await app.dispatch.dispatch({ sessionId: `s${n}`, calls: [{ id: 'c', name: 'slow', arguments: `{"n":${n}}` }] }, bearer('tok'))).results[0]!;
const counted = async (app: App) => Object.fromEntries((await app.registry.getToolStats({}, bearer('tok'))).stats.map((s) => [s.tool, Number(s.calls)]));
const fieldsInHash = async () => (await probe.hkeys(statsKeys('acme', '').counts)).filter((field) => field.startsWith('slow\0'));

test('a call that ends after its tool was removed on another replica is not counted there, nor in Redis; the name registered again starts at zero', async () => {
  await register(a);
  await until(() => b.app.deps.registry.lookup('acme', 'slow') !== undefined, 'B has the tool');
  expect((await call(b, 1)).isError).toBe(false);
  await until(async () => (await counted(a)).slow === 1, 'the first call counted in Redis');

  let open!: () => void;
  gate = new Promise((resolve) => (open = resolve));
  const asked = tools.count('/slow');
  const late = call(b, 2);
  try {
    await until(() => tools.count('/slow') > asked, 'the tool is running');
    expect((await a.registry.removeTool({ name: 'slow' }, bearer('tok'))).removed).toBe(true);
    await until(() => b.app.deps.registry.lookup('acme', 'slow') === undefined, 'B removed the tool');
  } finally {
    open();
    gate = undefined;
  }
  expect((await late).isError).toBe(false);
  // Several flushes later: nothing of the tool came back, on either replica or in Redis.
  await sleep(6 * FLUSH_MS);
  expect(await fieldsInHash()).toEqual([]);
  expect(await counted(b)).toEqual({});
  expect(await counted(a)).toEqual({});

  await register(a);
  await until(() => b.app.deps.registry.lookup('acme', 'slow') !== undefined, 'B has the tool again');
  expect(await counted(b)).toEqual({ slow: 0 });
  expect((await call(b, 3)).isError).toBe(false);
  await until(async () => (await counted(a)).slow === 1, 'the new call counted once');
});
