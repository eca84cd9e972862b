import { Effect } from '../../gen/dispatch/v1/tool_pb';
import type { CallSummary } from '../../src/events';
import { SILENT_LOGGER } from '../../src/log';
import { createLabelPairs, createToolStats, startMetrics } from '../../src/telemetry';
import { json, startToolServer, type ToolServer } from '../helpers/servers';
import { bearer, startMetricsApp, tokenEntry, type MetricsApp } from './metrics-app';
import { parsePrometheus } from './prometheus-text';

const ACME = bearer('tok-acme');
const GLOBEX = bearer('tok-globex');
const CONFIG = (url: string) => `
auth:
  tokens:
${tokenEntry('acme', 'tok-acme', ['dispatch', 'admin'])}${tokenEntry('globex', 'tok-globex', ['dispatch', 'admin'])}tools:
  - name: weather
    effect: read_only
    input_schema: '{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}'
    http: { url: "${url}/weather" }
  - name: failing
    effect: read_only
    retry: { max_attempts: 1 }
    input_schema: '{"type":"object"}'
    http: { url: "${url}/down" }
`;

describe('two tenants on one replica', () => {
  let tools: ToolServer;
  let d: MetricsApp;
  const one = (who: typeof ACME, name: string, args: object) => d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name, arguments: JSON.stringify(args) }] }, who);

  beforeAll(async () => {
    tools = await startToolServer({ '/weather': json({ temp: 20 }), '/down': json({ error: 'down' }, 0, 500), '/up': json({ ok: true }) });
    d = await startMetricsApp(CONFIG(tools.url));
    // Each tenant registers its own `flaky`: acme's fails, globex's works.
    for (const [who, path] of [[ACME, '/down'], [GLOBEX, '/up']] as const) {
      await d.registry.registerTools({ tools: [{ name: 'flaky', effect: Effect.READ_ONLY, retry: { maxAttempts: 1 }, executor: { case: 'http', value: { url: `${tools.url}${path}`, headers: {} } } }] }, who);
    }
    await one(ACME, 'weather', { city: 'Rome' });
    await one(ACME, 'weather', { city: 'Oslo' });
    await one(GLOBEX, 'weather', { city: 'Lima' });
    await one(GLOBEX, 'weather', { city: 5 });
    for (let i = 0; i < 6; i++) await one(ACME, 'flaky', { i });
    for (let i = 0; i < 2; i++) await one(GLOBEX, 'flaky', { i });
    for (let i = 0; i < 5; i++) await one(GLOBEX, 'failing', { i });
  });
  afterAll(async () => {
    await d?.close();
    await tools?.close();
  });

  test('the same config tool and same-named own tools get a series per tenant with its own counts', async () => {
    const m = await d.scrape();
    expect(m.value('dispatch_tool_calls_total', { tenant: 'acme', tool: 'weather', outcome: 'ok' })).toBe(2);
    expect(m.value('dispatch_tool_calls_total', { tenant: 'acme', tool: 'weather', outcome: 'INVALID_ARGUMENTS' })).toBeUndefined();
    expect(m.value('dispatch_tool_calls_total', { tenant: 'globex', tool: 'weather', outcome: 'ok' })).toBe(1);
    expect(m.value('dispatch_tool_calls_total', { tenant: 'globex', tool: 'weather', outcome: 'INVALID_ARGUMENTS' })).toBe(1);
    expect(m.value('dispatch_tool_rate', { tenant: 'acme', tool: 'weather', rate: 'validation_failure' })).toBe(0);
    expect(m.value('dispatch_tool_rate', { tenant: 'globex', tool: 'weather', rate: 'validation_failure' })).toBe(0.5);
    expect(m.value('dispatch_tool_calls_total', { tenant: 'acme', tool: 'flaky', outcome: 'TOOL_ERROR' })).toBe(5);
    expect(m.value('dispatch_tool_calls_total', { tenant: 'acme', tool: 'flaky', outcome: 'BREAKER_OPEN' })).toBe(1);
    expect(m.value('dispatch_tool_calls_total', { tenant: 'globex', tool: 'flaky', outcome: 'ok' })).toBe(2);
    expect(m.value('dispatch_tool_calls_total', { tenant: 'globex', tool: 'flaky', outcome: 'TOOL_ERROR' })).toBeUndefined();
    expect(m.value('dispatch_tool_attempts_total', { tenant: 'globex', tool: 'flaky' })).toBe(2);
    expect(m.value('dispatch_tool_call_duration_seconds_count', { tenant: 'globex', tool: 'flaky', outcome: 'ok' })).toBe(2);
    const perTool = m.samples.filter((s) => /^dispatch_(tool|breaker)_/.test(s.name) && s.name !== 'dispatch_tool_label_overflows_total');
    expect(perTool.length).toBeGreaterThan(0);
    expect(perTool.filter((s) => !s.labels.tenant)).toEqual([]);
    expect(m.value('dispatch_tool_label_overflows_total')).toBe(0);
  });

  test("breaker state per tenant: acme's own tool open, globex's of the same name not, the shared tool's under globex, whose calls opened it", async () => {
    const m = await d.scrape();
    expect(m.value('dispatch_breaker_state', { tenant: 'acme', tool: 'flaky' })).toBe(2);
    expect(m.value('dispatch_breaker_state', { tenant: 'globex', tool: 'flaky' })).toBeUndefined();
    // A shared tool's breaker is the calling tenant's own (security probe: one tenant opened it for all); it was `_shared`.
    expect(m.value('dispatch_breaker_state', { tenant: 'globex', tool: 'failing' })).toBe(2);
    const breakers = m.samples.filter((s) => s.name === 'dispatch_breaker_state').map((s) => `${s.labels.tenant}/${s.labels.tool}`);
    expect(breakers.sort()).toEqual(['acme/flaky', 'globex/failing']);
    const { stats } = await d.registry.getToolStats({ tool: 'flaky' }, GLOBEX);
    expect(stats[0]).toMatchObject({ breakerState: 'closed', calls: 2n });
  });
});

test('an unauthenticated caller is labelled tenant "default"', async () => {
  const tools = await startToolServer({ '/weather': json({ temp: 20 }) });
  const d = await startMetricsApp(CONFIG(tools.url).replace(/^auth:[\s\S]*?(?=tools:)/m, ''));
  try {
    await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 'weather', arguments: '{"city":"Rome"}' }] });
    const m = await d.scrape();
    expect(m.value('dispatch_tool_calls_total', { tenant: 'default', tool: 'weather', outcome: 'ok' })).toBe(1);
  } finally {
    await d.close();
    await tools.close();
  }
});

const summary = (tenant: string, tool: string, over: Partial<CallSummary> = {}): CallSummary => ({
  tenant, tool, known: true, outcome: 'ok', attempts: 1, durationMs: 1, validationFailed: false, timedOut: false, retried: false, idempotentHit: false, bounded: false, unexpected: false, ...over,
});

test('past maxLabelPairs, new (tenant, tool) pairs fold into _overflow and the overflow counter rises', async () => {
  const stats = createToolStats();
  const breakers = new Map([['a/x', 'open'], ['c/y', 'half_open'], ['shared', 'open']]);
  const metrics = await startMetrics({ listen: '127.0.0.1:0', stats, breakerStates: () => breakers, subscribers: () => 0, maxLabelPairs: 2, logger: SILENT_LOGGER });
  try {
    const record = (s: CallSummary) => {
      stats.record(s);
      metrics.recordCall(s);
    };
    record(summary('a', 'x'));
    record(summary('b', 'x'));
    record(summary('c', 'x', { validationFailed: true }));
    record(summary('c', 'x'));
    record(summary('c', 'y', { outcome: 'TIMEOUT', timedOut: true }));
    record(summary('a', 'x'));
    const m = parsePrometheus(await (await fetch(`http://127.0.0.1:${metrics.port}/metrics`)).text());
    const overflow = { tenant: '_overflow', tool: '_overflow' };
    expect(m.value('dispatch_tool_calls_total', { tenant: 'a', tool: 'x', outcome: 'ok' })).toBe(2);
    expect(m.value('dispatch_tool_calls_total', { tenant: 'b', tool: 'x', outcome: 'ok' })).toBe(1);
    expect(m.value('dispatch_tool_calls_total', { ...overflow, outcome: 'ok' })).toBe(2);
    expect(m.value('dispatch_tool_calls_total', { ...overflow, outcome: 'TIMEOUT' })).toBe(1);
    expect(m.value('dispatch_tool_label_overflows_total')).toBe(3);
    expect(m.value('dispatch_tool_validation_failures_total', overflow)).toBe(1);
    expect(m.value('dispatch_tool_rate', { ...overflow, rate: 'validation_failure' })).toBeCloseTo(1 / 3);
    expect(m.value('dispatch_tool_rate', { ...overflow, rate: 'timeout' })).toBeCloseTo(1 / 3);
    expect(m.value('dispatch_tool_rate', { tenant: 'a', tool: 'x', rate: 'validation_failure' })).toBe(0);
    expect(m.value('dispatch_breaker_state', { tenant: 'a', tool: 'x' })).toBe(2);
    expect(m.value('dispatch_breaker_state', overflow)).toBe(2);
    expect(m.samples.filter((s) => s.labels.tenant === 'c' || s.labels.tool === 'y' || s.labels.tool === 'shared')).toEqual([]);
  } finally {
    await metrics.shutdown();
  }
});

test('maxLabelPairs is checked, and the labels of a pair are one object, with "" as _shared', async () => {
  const base = { listen: '127.0.0.1:0', stats: createToolStats(), breakerStates: () => new Map(), subscribers: () => 0, logger: SILENT_LOGGER };
  await expect(startMetrics({ ...base, maxLabelPairs: -1 })).rejects.toThrow('maxLabelPairs must be an integer >= 0, got -1');
  await expect(startMetrics({ ...base, maxLabelPairs: 1.5 })).rejects.toThrow('maxLabelPairs must be an integer >= 0, got 1.5');
  const pairs = createLabelPairs(1);
  expect(pairs.of('', 'weather')).toEqual({ labels: { tenant: '_shared', tool: 'weather' }, folded: false });
  expect(pairs.of('', 'weather')).toBe(pairs.of('', 'weather'));
  expect(pairs.of('acme', 'weather')).toEqual({ labels: { tenant: '_overflow', tool: '_overflow' }, folded: true });
  expect(createLabelPairs(0).of('acme', 'weather').folded).toBe(true);
});
