import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { connectRedis, type RedisClient } from '../../src/store/redis';
import { statsKeys } from '../../src/telemetry/stats-hash';
import { useToolsAndRedis } from '../helpers/redis-app';
import { startApp } from '../helpers/servers';
import { until } from '../helpers/until';
import { bearer, tokenEntry } from './metrics-app';

// A call that ends after its tool was removed (RemoveTool on another replica, while the tool ran)
// is not counted: before, it put the removed tool back into GetToolStats (this replica's counts
// and the shared hash in Redis), and the name registered again started from that call, not zero.
// Two replicas of the full app over real gRPC, a private Redis and a real HTTP tool.

jest.setTimeout(30_000);

type App = Awaited<ReturnType<typeof startApp>>;
/** The shared counts' flush interval here (DISPATCH_STATS_FLUSH_MS), so they reach Redis quickly. */
const FLUSH_MS = 50;
/** Holds the tool's answers while set. */
let gate: Promise<void> | undefined;
const setup = useToolsAndRedis({
  '/slow': async (_req, res) => {
    await gate;
    res.writeHead(200).end('done');
  },
});

/** Runs `test` with two replicas of the full app on the file's Redis, then closes them. */
async function withReplicas(test: (a: App, b: App, probe: RedisClient) => Promise<void>): Promise<void> {
  const saved = process.env.DISPATCH_STATS_FLUSH_MS;
  process.env.DISPATCH_STATS_FLUSH_MS = String(FLUSH_MS);
  const config = `tools: []\nauth:\n  tokens:\n${tokenEntry('acme', 'tok', ['dispatch', 'admin'])}`;
  const apps = await Promise.all([0, 1].map(() => startApp(config, { redisUrl: setup.redis.url })));
  if (saved === undefined) delete process.env.DISPATCH_STATS_FLUSH_MS;
  else process.env.DISPATCH_STATS_FLUSH_MS = saved;
  const probe = connectRedis(setup.redis.url);
  try {
    await test(apps[0]!, apps[1]!, probe);
  } finally {
    probe.disconnect();
    await Promise.all(apps.map((app) => app.close()));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Waits until `check` holds. */
const holds = (check: () => boolean | Promise<boolean>, what: string) => until(async () => (await check()) || undefined, what);

const slow = () => ({ name: 'slow', effect: Effect.READ_ONLY, inputSchema: '{"type":"object"}', executor: { case: 'http' as const, value: { url: `${setup.tools.url}/slow` } } });
const register = (app: App) => app.registry.registerTools({ tools: [slow()] }, bearer('tok'));
const call = async (app: App, n: number) => (await app.dispatch.dispatch({ sessionId: `s${n}`, calls: [{ id: 'c', name: 'slow', arguments: `{"n":${n}}` }] }, bearer('tok'))).results[0]!;
const counted = async (app: App) => Object.fromEntries((await app.registry.getToolStats({}, bearer('tok'))).stats.map((s) => [s.tool, Number(s.calls)]));
const fieldsInHash = async (probe: RedisClient) => (await probe.hkeys(statsKeys('acme', '').counts)).filter((field) => field.startsWith('slow\0'));

test('a call that ends after its tool was removed on another replica is not counted there, nor in Redis; the name registered again starts at zero', () =>
  withReplicas(async (a, b, probe) => {
    await register(a);
    await holds(() => b.app.deps.registry.lookup('acme', 'slow') !== undefined, 'B has the tool');
    expect((await call(b, 1)).isError).toBe(false);
    await holds(async () => (await counted(a)).slow === 1, 'the first call counted in Redis');

    let open!: () => void;
    gate = new Promise((resolve) => (open = resolve));
    const asked = setup.tools.count('/slow');
    const late = call(b, 2);
    try {
      await holds(() => setup.tools.count('/slow') > asked, 'the tool is running');
      expect((await a.registry.removeTool({ name: 'slow' }, bearer('tok'))).removed).toBe(true);
      await holds(() => b.app.deps.registry.lookup('acme', 'slow') === undefined, 'B removed the tool');
    } finally {
      open();
      gate = undefined;
    }
    expect((await late).isError).toBe(false);
    // Several flushes later: nothing of the tool came back, on either replica or in Redis.
    await sleep(6 * FLUSH_MS);
    expect(await fieldsInHash(probe)).toEqual([]);
    expect(await counted(b)).toEqual({});
    expect(await counted(a)).toEqual({});

    await register(a);
    await holds(() => b.app.deps.registry.lookup('acme', 'slow') !== undefined, 'B has the tool again');
    expect(await counted(b)).toEqual({ slow: 0 });
    expect((await call(b, 3)).isError).toBe(false);
    await holds(async () => (await counted(a)).slow === 1, 'the new call counted once');
  }));
