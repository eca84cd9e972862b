import type { CallSummary } from '../../src/events';
import { StoreUnavailableError } from '../../src/store';
import { connectRedis } from '../../src/store/redis';
import { createSessionEnds } from '../../src/store/redis/session-ends';
import { createLabelPairs } from '../../src/telemetry';
import { createPendingDeltas } from '../../src/telemetry/pending-deltas';
import { statsKeys } from '../../src/telemetry/stats-hash';
import { createToolStats } from '../../src/telemetry/tool-stats';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp } from '../helpers/servers';
import { until } from '../helpers/until';
import { bearer, metricsPortLogger, tokenEntry } from './metrics-app';
import type { Scrape } from './prometheus-text';

// EraseTenant left the tenant's GetToolStats counts of the config file's tools (7 days) and its
// name in the metrics' labels until the process restarted. Now its last step tells every replica
// (Store.tenantErased; with Redis, a PUBLISH every replica hears) to drop the tenant's tool stats,
// local and shared, and every label pair of the tenant; other tenants keep theirs.

jest.setTimeout(30_000);

const summary = (tenant: string, tool: string): CallSummary => ({ tenant, tool, known: true, outcome: 'ok', attempts: 1, durationMs: 1, validationFailed: false, timedOut: false, retried: false, idempotentHit: false, bounded: false, unexpected: false });

test("forgetting a tenant drops its pairs (its _overflow pair too) and gives their places back; its stats and held deltas go, another tenant's stay", () => {
  const pairs = createLabelPairs(4, 2);
  expect(pairs.of('acme', 'a').folded).toBe(false);
  expect(pairs.of('acme', 'b').folded).toBe(false);
  expect(pairs.of('acme', 'c')).toEqual({ labels: { tenant: 'acme', tool: '_overflow' }, folded: true });
  expect(pairs.of('beta', 'a').folded).toBe(false);
  expect(pairs.of('beta', 'b').folded).toBe(true); // the cap of 4: acme's 2 and _overflow, beta's a
  expect(pairs.forgetTenant('acme').map((l) => l.tool).sort()).toEqual(['_overflow', 'a', 'b']);
  expect(pairs.forgetTenant('acme')).toEqual([]);
  expect(pairs.forgetTenant('')).toEqual([]);
  // Three places back: new pairs get labels of their own; beta's b, folded before, stays folded.
  for (const tool of ['x', 'y']) expect(pairs.of('gamma', tool).folded).toBe(false);
  expect(pairs.of('beta', 'b').folded).toBe(true);
  expect(pairs.of('beta', 'c').folded).toBe(false);
  expect(pairs.of('delta', 'x')).toEqual({ labels: { tenant: '_overflow', tool: '_overflow' }, folded: true });

  const stats = createToolStats({ maxTracked: 3, maxTrackedPerTenant: 3 });
  for (const [tenant, tool] of [['acme', 'a'], ['acme', 'b'], ['beta', 'a'], ['beta', 'b']] as const) stats.record(summary(tenant, tool));
  expect(stats.tools('beta')).toEqual(['a']);
  stats.forget('acme');
  expect(stats.tools('acme')).toEqual([]);
  stats.record(summary('beta', 'b'));
  stats.record(summary('gamma', 'a'));
  expect([stats.tools('beta'), stats.tools('gamma')]).toEqual([['a', 'b'], ['a']]);

  const deltas = createPendingDeltas(10, 10);
  deltas.add(summary('acme', 'a'));
  deltas.seal();
  deltas.add(summary('acme', 'b'));
  deltas.add(summary('beta', 'a'));
  expect(deltas.pairs).toBe(3);
  expect(deltas.forget('acme')).toBe(true);
  expect(deltas.forget('acme')).toBe(false);
  expect(deltas.pairs).toBe(1);
  expect(deltas.held('acme')).toEqual({ pending: new Map(), sealed: undefined });
  expect([...deltas.held('beta').pending.keys()]).toEqual(['a']);
});

const CONFIG = `auth:
  tokens:
${tokenEntry('acme', 'tok-acme', ['dispatch', 'admin'])}${tokenEntry('beta', 'tok-beta', ['dispatch', 'admin'])}tools:
  - name: look
    effect: read_only
    input_schema: '{"type":"object"}'
    builtin: { name: echo }
`;
const ACME = bearer('tok-acme');
const BETA = bearer('tok-beta');
type App = Awaited<ReturnType<typeof startApp>>;

const look = (app: App, who: typeof ACME, n: number) => app.dispatch.dispatch({ sessionId: `s${n}`, calls: [{ id: 'c', name: 'look', arguments: `{"n":${n}}` }] }, who);
const calls = async (app: App, who: typeof ACME) => Number((await app.registry.getToolStats({ tool: 'look' }, who)).stats[0]?.calls ?? -1n);
const tenantsIn = (scrape: Scrape) => new Set(scrape.samples.map((s) => s.labels.tenant).filter((t) => t !== undefined));

test("the memory store: EraseTenant drops the tenant's counts of the config file's tool and its metric labels; another tenant's stay", async () => {
  const metrics = metricsPortLogger();
  const app = await startApp(CONFIG, { logger: metrics.logger, metricsListen: '127.0.0.1:0' });
  try {
    for (let n = 0; n < 3; n++) await look(app, ACME, n);
    await look(app, BETA, 9);
    expect([await calls(app, ACME), await calls(app, BETA)]).toEqual([3, 1]);
    expect(tenantsIn(await metrics.scrape())).toEqual(new Set(['acme', 'beta']));

    expect(await app.dispatch.eraseTenant({ confirmTenant: 'acme' }, ACME)).toMatchObject({ sessionsEnded: 3n });
    expect([await calls(app, ACME), await calls(app, BETA)]).toEqual([0, 1]);
    const after = await metrics.scrape();
    expect(tenantsIn(after)).toEqual(new Set(['beta']));
    expect(after.value('dispatch_tool_calls_total', { tenant: 'beta', tool: 'look', outcome: 'ok' })).toBe(1);
    // The tenant's next call counts from zero, under labels of its own again.
    await look(app, ACME, 4);
    expect(await calls(app, ACME)).toBe(1);
    expect((await metrics.scrape()).value('dispatch_tool_calls_total', { tenant: 'acme', tool: 'look', outcome: 'ok' })).toBe(1);
  } finally {
    await app.close();
  }
});

describe('Redis, two replicas', () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startRedis({ own: true });
  });
  afterAll(() => redis?.close());

  test("EraseTenant on one drops the tenant's shared counts and the other replica's own counts and labels; another tenant's stay", async () => {
    const saved = process.env.DISPATCH_STATS_FLUSH_MS;
    process.env.DISPATCH_STATS_FLUSH_MS = '50';
    const [ma, mb] = [metricsPortLogger(), metricsPortLogger()];
    const a = await startApp(CONFIG, { redisUrl: redis.url, logger: ma.logger, metricsListen: '127.0.0.1:0' });
    const b = await startApp(CONFIG, { redisUrl: redis.url, logger: mb.logger, metricsListen: '127.0.0.1:0' });
    if (saved === undefined) delete process.env.DISPATCH_STATS_FLUSH_MS;
    else process.env.DISPATCH_STATS_FLUSH_MS = saved;
    const probe = connectRedis(redis.url);
    try {
      await look(a, ACME, 1);
      for (let n = 2; n < 4; n++) await look(b, ACME, n);
      await look(b, BETA, 9);
      await until(async () => ((await calls(a, ACME)) === 3 && (await calls(a, BETA)) === 1) || undefined, 'the counts shared in Redis');
      expect(tenantsIn(await mb.scrape())).toEqual(new Set(['acme', 'beta']));
      expect(await probe.exists(statsKeys('acme', '').counts)).toBe(1);

      expect(await a.dispatch.eraseTenant({ confirmTenant: 'acme' }, ACME)).toMatchObject({ sessionsEnded: 3n });
      // Deleted by each replica's listener, after any flush of its own still out (not awaited by the RPC).
      await until(async () => ((await probe.exists(statsKeys('acme', '').counts, `${statsKeys('acme', '').counts}:window`)) === 0) || undefined, "the tenant's shared hashes deleted");
      expect(await probe.exists(statsKeys('beta', '').counts)).toBe(1);
      for (const app of [a, b]) await until(async () => ((await calls(app, ACME)) === 0) || undefined, "the tenant's counts gone");
      expect([await calls(b, BETA), await calls(a, BETA)]).toEqual([1, 1]);
      // B heard it: the tenant's labels left its scrape (A never served one of its calls but the first).
      await until(async () => (!tenantsIn(await mb.scrape()).has('acme')) || undefined, "the tenant's labels gone from B's scrape");
      expect(tenantsIn(await ma.scrape()).has('acme')).toBe(false);
      expect((await mb.scrape()).value('dispatch_tool_calls_total', { tenant: 'beta', tool: 'look', outcome: 'ok' })).toBe(1);
    } finally {
      probe.disconnect();
      await a.close();
      await b.close();
    }
  });

  test("an erasure's announcement Redis does not take: this replica's listeners are told, and the step rejects STORE_UNAVAILABLE", async () => {
    const own = await startRedis({ own: true });
    const client = connectRedis(own.url);
    const ends = createSessionEnds(client, { timeoutMs: 300 });
    const heard: string[] = [];
    ends.erasures.onTenantErased((tenant) => heard.push(tenant));
    try {
      await until(() => (client.status === 'ready' ? true : undefined), 'the connection');
      await ends.erasures.tenantErased('acme');
      await own.stop();
      const refused = await ends.erasures.tenantErased('beta').catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(StoreUnavailableError);
      expect(heard).toEqual(['acme', 'beta']);
    } finally {
      await ends.close();
      client.disconnect();
      await own.close();
    }
  });

  test('EraseTenant whose announcement Redis refuses answers UNAVAILABLE saying the sessions were ended and to ask again', async () => {
    const own = await startRedis({ own: true });
    const app = await startApp(CONFIG, { redisUrl: own.url });
    const admin = connectRedis(own.url);
    try {
      await look(app, ACME, 1);
      // A real refusal: the user may publish session ends (end-session.lua) but not erasures.
      await admin.call('ACL', 'SETUSER', 'default', 'resetchannels', '&dispatch:session-ends');
      const refused = await app.dispatch.eraseTenant({ confirmTenant: 'acme' }, ACME).catch((error: { code: number; details: string }) => error);
      expect(refused).toMatchObject({ code: 14 });
      expect((refused as { details: string }).details).toMatch(/^the tenant's 1 sessions were ended, but the other replicas could not be told to drop its tool stats and metric labels \(.*NOPERM.*\); ask again$/);
      await admin.call('ACL', 'SETUSER', 'default', 'allchannels');
      expect(await app.dispatch.eraseTenant({ confirmTenant: 'acme' }, ACME)).toMatchObject({ sessionsEnded: 0n });
    } finally {
      admin.disconnect();
      await app.close();
      await own.close();
    }
  });
});
