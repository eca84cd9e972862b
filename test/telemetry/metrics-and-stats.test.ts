import { status } from '@grpc/grpc-js';
import { json, startToolServer, type ToolServer } from '../helpers/servers';
import { bearer, expectSixAlerts, sixRateRoutes, startMetricsApp, tokenEntry, type MetricsApp } from './metrics-app';

const TOOLS = (url: string) => `
auth:
  tokens:
${tokenEntry('acme', 'tok-acme', ['dispatch'])}${tokenEntry('globex', 'tok-globex', ['dispatch'])}tools:
  - name: weather
    effect: read_only
    input_schema: '{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}'
    http: { url: "${url}/weather" }
  - name: slow
    effect: read_only
    timeout_ms: 50
    retry: { initial_backoff_ms: 5, max_backoff_ms: 10 }
    input_schema: '{"type":"object"}'
    http: { url: "${url}/slow" }
  - name: crashy
    effect: read_only
    returns_json: true
    retry: { max_attempts: 1 }
    input_schema: '{"type":"object"}'
    http: { url: "${url}/crashy" }
  - name: big
    effect: read_only
    max_result_chars: 100
    input_schema: '{"type":"object"}'
    http: { url: "${url}/big" }
  - name: send
    effect: side_effect
    input_schema: '{"type":"object"}'
    http: { url: "${url}/send" }
  - name: failing
    effect: read_only
    retry: { max_attempts: 1 }
    input_schema: '{"type":"object"}'
    http: { url: "${url}/failing" }
`;
const ACME = bearer('tok-acme');
const GLOBEX = bearer('tok-globex');

let tools: ToolServer;
let d: MetricsApp;

beforeAll(async () => {
  tools = await startToolServer({
    ...sixRateRoutes(),
    '/failing': json({ error: 'down' }, 0, 500),
  });
  d = await startMetricsApp(TOOLS(tools.url));
  const one = (name: string, args: object, options = ACME, session = 'm') => d.dispatch.dispatch({ sessionId: session, calls: [{ id: 'c', name, arguments: JSON.stringify(args) }] }, options);
  await one('weather', { city: 'Rome' });
  await one('weather', { city: 'Oslo' });
  await one('weather', { city: 5 });
  await one('slow', {});
  await one('crashy', {});
  await one('big', {});
  await one('send', { to: 'a' }, ACME, 's1');
  await one('send', { to: 'a' }, ACME, 's1');
  await one('nonexistent', {});
  for (let i = 0; i < 5; i++) await one('failing', { i });
  await one('weather', { city: 'Lima' }, GLOBEX);
});
afterAll(async () => {
  await d?.close();
  await tools?.close();
});

const acme = (labels: Record<string, string>) => ({ tenant: 'acme', ...labels });

test('the Prometheus endpoint serves calls by tenant, tool and outcome, durations, the rate counters and gauges', async () => {
  expect(d.metricsPort).toBeGreaterThan(0);
  const m = await d.scrape();
  expect(m.types.dispatch_tool_calls_total).toBe('counter');
  expect(m.value('dispatch_tool_calls_total', acme({ tool: 'weather', outcome: 'ok' }))).toBe(2);
  expect(m.value('dispatch_tool_calls_total', { tenant: 'globex', tool: 'weather', outcome: 'ok' })).toBe(1);
  expect(m.value('dispatch_tool_calls_total', acme({ tool: 'weather', outcome: 'INVALID_ARGUMENTS' }))).toBe(1);
  expect(m.value('dispatch_tool_calls_total', acme({ tool: 'slow', outcome: 'TIMEOUT' }))).toBe(1);
  expect(m.value('dispatch_tool_calls_total', acme({ tool: '_unknown', outcome: 'UNKNOWN_TOOL' }))).toBe(1);
  expect(m.samples.some((s) => s.labels.tool === 'nonexistent')).toBe(false);
  expect(m.types.dispatch_tool_call_duration_seconds).toBe('histogram');
  expect(m.value('dispatch_tool_call_duration_seconds_count', acme({ tool: 'weather', outcome: 'ok' }))).toBe(2);
  expect(m.value('dispatch_tool_call_duration_seconds_bucket', acme({ tool: 'slow', outcome: 'TIMEOUT', le: '0.05' }))).toBe(0);
  expect(m.value('dispatch_tool_call_duration_seconds_bucket', acme({ tool: 'slow', outcome: 'TIMEOUT', le: '+Inf' }))).toBe(1);
  expect(m.value('dispatch_tool_attempts_total', acme({ tool: 'slow' }))).toBe(2);
  expect(m.value('dispatch_tool_validation_failures_total', acme({ tool: 'weather' }))).toBe(1);
  expect(m.value('dispatch_tool_validation_failures_total', { tenant: 'globex', tool: 'weather' })).toBe(0);
  expect(m.value('dispatch_tool_timeouts_total', acme({ tool: 'slow' }))).toBe(1);
  expect(m.value('dispatch_tool_retries_total', acme({ tool: 'slow' }))).toBe(1);
  expect(m.value('dispatch_tool_retries_total', acme({ tool: 'weather' }))).toBe(0);
  expect(m.value('dispatch_tool_unexpected_exceptions_total', acme({ tool: 'crashy' }))).toBe(1);
  expect(m.value('dispatch_tool_bounded_results_total', acme({ tool: 'big' }))).toBe(1);
  expect(m.value('dispatch_tool_idempotent_hits_total', acme({ tool: 'send' }))).toBe(1);
  expect(m.value('dispatch_tool_rate', acme({ tool: 'weather', rate: 'validation_failure' }))).toBeCloseTo(1 / 3);
  expect(m.value('dispatch_tool_rate', { tenant: 'globex', tool: 'weather', rate: 'validation_failure' })).toBe(0);
  expect(m.value('dispatch_tool_rate', acme({ tool: 'send', rate: 'idempotent_hit' }))).toBeCloseTo(1 / 2);
  // The shared tool's breaker is the calling tenant's own (security probe: one tenant opened it for all).
  expect(m.value('dispatch_breaker_state', { tenant: 'acme', tool: 'failing' })).toBe(2);
  expect(m.value('dispatch_tool_label_overflows_total')).toBe(0);
  expect(m.value('dispatch_events_subscribers')).toBe(0);
  expect(m.value('dispatch_turns_in_flight')).toBe(0);
  expect(m.value('dispatch_turns_refused_total')).toBe(0);
  expect((await fetch(`http://127.0.0.1:${d.metricsPort}/other`)).status).toBe(404);
});

test('GetToolStats: the six rates per tool of the caller’s tenant, breaker state, health, alerts and their thresholds', async () => {
  const { stats } = await d.registry.getToolStats({}, ACME);
  const byTool = Object.fromEntries(stats.map((s) => [s.tool, s]));
  expect(Object.keys(byTool).sort()).toEqual(['big', 'crashy', 'failing', 'send', 'slow', 'weather']);
  expect(byTool.weather!.calls).toBe(3n);
  expect(byTool.weather!.rates!.validationFailure).toBeCloseTo(1 / 3);
  expectSixAlerts(byTool);
  expect(byTool.failing).toMatchObject({ calls: 5n, breakerState: 'open' });
  expect(byTool.failing!.healthScore).toBeLessThan(1);
  expect(byTool.weather).toMatchObject({ breakerState: 'closed', healthScore: 1 });
  // Every tool's answer carries the thresholds its alerts were judged by, alerting or not.
  const thresholds = { validationFailure: 0.15, timeout: 0.05, retry: 0.1, idempotentHit: 0.05, resultBounding: 0.2, unexpectedException: 0 };
  for (const s of stats) expect(s.alertThresholds).toMatchObject(thresholds);
});

test('GetToolStats by name, per tenant, and NOT_FOUND for a name it has never seen', async () => {
  const { stats } = await d.registry.getToolStats({ tool: 'weather' }, GLOBEX);
  expect(stats).toHaveLength(1);
  expect(stats[0]).toMatchObject({ tool: 'weather', calls: 1n, alerts: [] });
  const acme = await d.registry.getToolStats({ tool: 'weather' }, ACME);
  expect(acme.stats[0]!.calls).toBe(3n);
  await expect(d.registry.getToolStats({ tool: 'nonexistent' }, ACME)).rejects.toMatchObject({ code: status.NOT_FOUND });
  await expect(d.registry.getToolStats({}, { metadata: { authorization: 'Bearer nope' } })).rejects.toMatchObject({ code: status.UNAUTHENTICATED });
});
