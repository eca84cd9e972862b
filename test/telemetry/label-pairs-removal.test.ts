// A (tenant, tool) label pair kept its labels for as long as the process ran: a tenant that
// registered and removed tools used up its quota, then the whole cap, with pairs of tools that no
// longer existed, and every new tool's series fell into `_overflow` until a restart. A removed
// tool's pair now goes: its series leave the scrape, and its place in the cap and the quota is
// given back.
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import type { CallSummary } from '../../src/events';
import { createLabelPairs } from '../../src/telemetry';
import { createCallMetrics } from '../../src/telemetry/call-metrics';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp } from '../helpers/servers';
import { bearer, metricsPortLogger, startMetricsApp, tokenEntry } from './metrics-app';
import { parsePrometheus, type Scrape } from './prometheus-text';

jest.setTimeout(60_000);

const own = (tenant: string, tool: string) => ({ labels: { tenant, tool }, folded: false });
const TENANT_OVERFLOW = { labels: { tenant: 'acme', tool: '_overflow' }, folded: true };
const GLOBAL_OVERFLOW = { labels: { tenant: '_overflow', tool: '_overflow' }, folded: true };

test("a removed tool's pair gives its place in the cap back; a pair folded before stays folded and frees nothing", () => {
  const pairs = createLabelPairs(3, 3);
  for (const tool of ['a', 'b', 'c']) expect(pairs.of('acme', tool)).toEqual(own('acme', tool));
  expect(pairs.of('globex', 'x')).toEqual(GLOBAL_OVERFLOW);
  const a = pairs.of('acme', 'a').labels;
  expect(pairs.forget('acme', 'a')).toBe(a);
  expect(pairs.forget('acme', 'a')).toBeUndefined();
  // The freed place goes to the next new pair; globex/x, folded before, stays folded.
  expect(pairs.of('globex', 'y')).toEqual(own('globex', 'y'));
  expect(pairs.of('globex', 'x')).toEqual(GLOBAL_OVERFLOW);
  // Forgetting a folded pair frees no place it never held.
  expect(pairs.forget('globex', 'x')).toBeUndefined();
  expect(pairs.of('globex', 'z')).toEqual(GLOBAL_OVERFLOW);
  // A name seen again after its removal is a new pair (new labels object: its series start at zero).
  expect(pairs.forget('acme', 'b')).toEqual({ tenant: 'acme', tool: 'b' });
  const again = pairs.of('acme', 'a');
  expect(again).toEqual(own('acme', 'a'));
  expect(again.labels).not.toBe(a);
});

test("a tenant's quota is given back too; its _overflow pair keeps its place, its folded tools stay folded until removed", () => {
  const pairs = createLabelPairs(10, 2);
  expect(pairs.of('acme', 'a')).toEqual(own('acme', 'a'));
  expect(pairs.of('acme', 'b')).toEqual(own('acme', 'b'));
  expect(pairs.of('acme', 'c')).toEqual(TENANT_OVERFLOW);
  expect(pairs.forget('acme', 'a')).toEqual({ tenant: 'acme', tool: 'a' });
  expect(pairs.of('acme', 'c')).toEqual(TENANT_OVERFLOW);
  expect(pairs.of('acme', 'd')).toEqual(own('acme', 'd'));
  expect(pairs.of('acme', 'e')).toEqual(TENANT_OVERFLOW);
  expect(pairs.forget('acme', 'c')).toBeUndefined();
  expect(pairs.of('acme', 'f')).toEqual(TENANT_OVERFLOW);
  // c removed and registered again is a new pair: once the quota has room, it gets labels.
  expect(pairs.forget('acme', 'b')).toEqual({ tenant: 'acme', tool: 'b' });
  expect(pairs.of('acme', 'c')).toEqual(own('acme', 'c'));
  // acme holds d, c and its _overflow pair: 3 of 10.
  for (let i = 0; i < 7; i++) expect(pairs.of(`t${i}`, 'x').folded).toBe(false);
  expect(pairs.of('t7', 'x')).toEqual(GLOBAL_OVERFLOW);
});

test('_shared pairs are never forgotten; a pair first seen for a tool not registered now counts under its tenant\'s _unknown', () => {
  const registered = new Set(['acme/a', '/s', 'globex/c', 'globex/d']);
  const pairs = createLabelPairs(3, 3, (tenant, tool) => registered.has(`${tenant}/${tool}`));
  const shared = pairs.of('', 's');
  expect(shared).toEqual(own('_shared', 's'));
  expect(pairs.forget('', 's')).toBeUndefined();
  expect(pairs.of('', 's')).toBe(shared);
  expect(pairs.of('acme', 'a')).toEqual(own('acme', 'a'));
  // A call that ended after its tool's removal (its pair forgotten): no pair of its own, which no removal would free.
  registered.delete('acme/a');
  expect(pairs.forget('acme', 'a')).toBeDefined();
  expect(pairs.of('acme', 'a')).toEqual(own('acme', '_unknown'));
  expect(pairs.of('acme', 'b')).toBe(pairs.of('acme', '_unknown'));
  // _shared/s, acme/_unknown and globex/c: the cap (3) is reached.
  expect(pairs.of('globex', 'c')).toEqual(own('globex', 'c'));
  expect(pairs.of('globex', 'd')).toEqual(GLOBAL_OVERFLOW);
});

test("a forgotten pair's call series leave the scrape; the name recorded again starts at zero", async () => {
  const pairs = createLabelPairs(10, 10);
  const metrics = createCallMetrics(pairs);
  const summary = (tool: string): CallSummary => ({ tenant: 'acme', tool, known: true, outcome: 'ok', attempts: 1, durationMs: 1, validationFailed: false, timedOut: false, retried: false, idempotentHit: false, bounded: false, unexpected: false });
  const scrape = async () => parsePrometheus(Buffer.concat(await metrics.prometheusText()).toString());
  metrics.record(summary('a'));
  metrics.record(summary('a'));
  metrics.record(summary('b'));
  metrics.forget(pairs.forget('acme', 'a')!);
  const after = await scrape();
  expect(after.samples.filter((s) => s.labels.tool === 'a')).toEqual([]);
  expect(after.value('dispatch_tool_calls_total', { tenant: 'acme', tool: 'b' })).toBe(1);
  metrics.record(summary('a'));
  expect((await scrape()).value('dispatch_tool_calls_total', { tenant: 'acme', tool: 'a' })).toBe(1);
});

const CONFIG = `
auth:
  tokens:
${tokenEntry('acme', 'tok-acme', ['dispatch', 'admin'])}telemetry: { max_label_pairs: 3, max_label_pairs_per_tenant: 3 }
policies:
  - match: ['t*']
    concurrency: { max_in_flight: 4 }
tools: []
`;
const ACME = bearer('tok-acme');
const echo = (name: string) => ({ name, effect: Effect.READ_ONLY, executor: { case: 'builtin' as const, value: { name: 'echo' } } });
const seriesOf = (m: Scrape, tool: string) => m.samples.filter((s) => s.labels.tool === tool).map((s) => s.name);

test('RemoveTool drops the series of its pair from /metrics, and a tool registered next gets labels of its own, not _overflow', async () => {
  const app = await startMetricsApp(CONFIG);
  try {
    await app.registry.registerTools({ tools: ['t0', 't1', 't2'].map(echo) }, ACME);
    const { results } = await app.dispatch.dispatch({ sessionId: 's', calls: ['t0', 't1', 't2'].map((name) => ({ id: name, name, arguments: '{"text":"x"}' })) }, ACME);
    expect(results.map((r) => r.isError)).toEqual([false, false, false]);
    const before = await app.scrape();
    expect(before.value('dispatch_tool_calls_total', { tenant: 'acme', tool: 't0', outcome: 'ok' })).toBe(1);
    expect(before.value('dispatch_tool_in_flight', { tenant: 'acme', tool: 't0' })).toBe(0);
    expect(seriesOf(before, 't0')).toEqual(expect.arrayContaining(['dispatch_tool_attempt_outcomes_total', 'dispatch_tool_rate', 'dispatch_tool_timeouts_total']));

    expect((await app.registry.removeTool({ name: 't0' }, ACME)).removed).toBe(true);
    const after = await app.scrape();
    expect(seriesOf(after, 't0')).toEqual([]);
    expect(after.value('dispatch_tool_calls_total', { tenant: 'acme', tool: 't1', outcome: 'ok' })).toBe(1);

    await app.registry.registerTools({ tools: [echo('t3')] }, ACME);
    await app.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 't3', arguments: '{"text":"x"}' }] }, ACME);
    const next = await app.scrape();
    expect(next.value('dispatch_tool_calls_total', { tenant: 'acme', tool: 't3', outcome: 'ok' })).toBe(1);
    expect(next.value('dispatch_tool_in_flight', { tenant: 'acme', tool: 't3' })).toBe(0);
    expect(next.samples.filter((s) => s.labels.tool === '_overflow')).toEqual([]);
    expect(next.value('dispatch_tool_label_overflows_total')).toBe(0);
  } finally {
    await app.close();
  }
});

describe('across replicas (a private Redis)', () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startRedis({ own: true });
  });
  afterAll(() => redis?.close());

  test('a removal on replica A frees the pair on replica B, whose next tool gets labels of its own', async () => {
    const metricsA = metricsPortLogger();
    const metricsB = metricsPortLogger();
    const a = await startApp(CONFIG, { redisUrl: redis.url, logger: metricsA.logger, metricsListen: '127.0.0.1:0' });
    const b = await startApp(CONFIG, { redisUrl: redis.url, logger: metricsB.logger, metricsListen: '127.0.0.1:0' });
    const until = async (check: () => boolean, what: string) => {
      for (const deadline = Date.now() + 10_000; !check(); await new Promise((r) => setTimeout(r, 20))) if (Date.now() > deadline) throw new Error(`not in time: ${what}`);
    };
    try {
      await a.registry.registerTools({ tools: ['t0', 't1', 't2'].map(echo) }, ACME);
      await until(() => b.app.deps.registry.lookup('acme', 't2') !== undefined, 'B has the tools');
      await b.dispatch.dispatch({ sessionId: 's', calls: ['t0', 't1', 't2'].map((name) => ({ id: name, name, arguments: '{"text":"x"}' })) }, ACME);
      expect((await metricsB.scrape()).value('dispatch_tool_calls_total', { tenant: 'acme', tool: 't0', outcome: 'ok' })).toBe(1);

      expect((await a.registry.removeTool({ name: 't0' }, ACME)).removed).toBe(true);
      await until(() => b.app.deps.registry.lookup('acme', 't0') === undefined, 'B applied the removal');
      expect(seriesOf(await metricsB.scrape(), 't0')).toEqual([]);

      await a.registry.registerTools({ tools: [echo('t3')] }, ACME);
      await until(() => b.app.deps.registry.lookup('acme', 't3') !== undefined, 'B has t3');
      await b.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 't3', arguments: '{"text":"x"}' }] }, ACME);
      const m = await metricsB.scrape();
      expect(m.value('dispatch_tool_calls_total', { tenant: 'acme', tool: 't3', outcome: 'ok' })).toBe(1);
      expect(m.value('dispatch_tool_label_overflows_total')).toBe(0);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
