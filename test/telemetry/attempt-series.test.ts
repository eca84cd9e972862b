import { json, startToolServer, type ToolServer } from '../helpers/servers';
import { startMetricsApp, type MetricsApp } from './metrics-app';

// Retries showed in the metrics only as a rate (dispatch_tool_retries_total counts calls retried
// at least once), and the one duration histogram measured calls, retry backoff and approval waits
// included: a slow tool and a fast tool retried after a long backoff looked alike. Now each
// attempt is counted by its outcome and whether it was a retry, and the executor's time of each
// attempt that ran its tool has a histogram of its own. Real gRPC server on 127.0.0.1:0, a real
// HTTP tool server, the real /metrics endpoint.

const BACKOFF_MS = 300;

let tools: ToolServer;
let app: MetricsApp;
let flakyCalls = 0;

beforeAll(async () => {
  tools = await startToolServer({
    '/flaky': (_req, res) => void (flakyCalls++ % 2 === 0 ? res.writeHead(503).end('busy') : res.writeHead(200).end('"fine"')),
    '/lookup': json({ found: true }),
    '/missing': (_req, res) => void res.writeHead(404).end('no such thing'),
  });
  app = await startMetricsApp(`
tools:
  - name: flaky
    effect: read_only
    input_schema: '{"type":"object"}'
    retry: { initial_backoff_ms: ${BACKOFF_MS}, max_backoff_ms: ${BACKOFF_MS} }
    http: { url: "${tools.url}/flaky" }
  - name: lookup
    effect: read_only
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/lookup" }
  - name: missing
    effect: read_only
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/missing" }
`);
});
afterAll(async () => {
  await app?.close();
  await tools?.close();
});

const ATTEMPTS = 'dispatch_tool_attempt_outcomes_total';
const RAN = 'dispatch_tool_attempt_duration_seconds';

test('each attempt is counted by outcome and retry; the attempt histogram leaves the backoff out, the call histogram has it', async () => {
  const { results } = await app.dispatch.dispatch({ sessionId: 'attempts', calls: [{ id: 'f1', name: 'flaky', arguments: '{}' }] });
  expect(results[0]).toMatchObject({ isError: false, attempts: 2 });
  const scrape = await app.scrape();
  expect(scrape.types[ATTEMPTS]).toBe('counter');
  expect(scrape.types[RAN]).toBe('histogram');
  expect(scrape.value(ATTEMPTS, { tenant: 'default', tool: 'flaky', outcome: 'TOOL_ERROR', retry: 'false' })).toBe(1);
  expect(scrape.value(ATTEMPTS, { tenant: 'default', tool: 'flaky', outcome: 'ok', retry: 'true' })).toBe(1);
  expect(scrape.samples.filter((s) => s.name === ATTEMPTS && s.labels.tool === 'flaky')).toHaveLength(2);
  // The per-call series as before: one call, ok, two attempts.
  expect(scrape.value('dispatch_tool_calls_total', { tool: 'flaky', outcome: 'ok' })).toBe(1);
  expect(scrape.value('dispatch_tool_attempts_total', { tool: 'flaky' })).toBe(2);

  expect(scrape.value(`${RAN}_count`, { tenant: 'default', tool: 'flaky' })).toBe(2);
  expect(scrape.value(`${RAN}_bucket`, { tool: 'flaky', le: '+Inf' })).toBe(2);
  const ranSeconds = scrape.value(`${RAN}_sum`, { tool: 'flaky' })!;
  const callSeconds = scrape.value('dispatch_tool_call_duration_seconds_sum', { tool: 'flaky', outcome: 'ok' })!;
  expect(callSeconds).toBeGreaterThanOrEqual(BACKOFF_MS / 1000);
  expect(ranSeconds).toBeGreaterThan(0);
  expect(ranSeconds).toBeLessThan(callSeconds - (BACKOFF_MS / 1000) * 0.9);
});

test('an error not retried is one first attempt of its kind; a memo hit counts as an attempt but ran no tool', async () => {
  await app.dispatch.dispatch({ sessionId: 'attempts', calls: [{ id: 'm1', name: 'missing', arguments: '{}' }] });
  await app.dispatch.dispatch({ sessionId: 'attempts', calls: [{ id: 'l1', name: 'lookup', arguments: '{"q":"a"}' }] });
  const served = tools.count('/lookup');
  const { results } = await app.dispatch.dispatch({ sessionId: 'attempts', calls: [{ id: 'l2', name: 'lookup', arguments: '{"q":"a"}' }] });
  expect(results[0]!.cached).toBe(true);
  expect(tools.count('/lookup')).toBe(served);
  const scrape = await app.scrape();
  expect(scrape.value(ATTEMPTS, { tool: 'missing', outcome: 'TOOL_ERROR', retry: 'false' })).toBe(1);
  expect(scrape.value(ATTEMPTS, { tool: 'missing', retry: 'true' })).toBeUndefined();
  expect(scrape.value(ATTEMPTS, { tool: 'lookup', outcome: 'ok', retry: 'false' })).toBe(2);
  expect(scrape.value(`${RAN}_count`, { tool: 'lookup' })).toBe(1);
});

test('a made-up name adds no attempt series (its call counts under _unknown); the known call beside it does', async () => {
  const before = await app.scrape();
  const lookups = before.value(ATTEMPTS, { tool: 'lookup', outcome: 'ok', retry: 'false' }) ?? 0;
  await app.dispatch.dispatch({ sessionId: 'attempts', calls: [{ id: 'u1', name: 'no_such_tool_9f3', arguments: '{}' }, { id: 'l3', name: 'lookup', arguments: '{"q":"b"}' }] });
  const scrape = await app.scrape();
  expect(scrape.value('dispatch_tool_calls_total', { tool: '_unknown', outcome: 'UNKNOWN_TOOL' })).toBe(1);
  expect(scrape.value(ATTEMPTS, { tool: 'lookup', outcome: 'ok', retry: 'false' })).toBe(lookups + 1);
  const series = (s: typeof scrape) => s.samples.filter((sample) => sample.name.startsWith('dispatch_tool_attempt_')).map((sample) => sample.labels.tool);
  expect(new Set(series(scrape))).toEqual(new Set(series(before)));
  expect(series(scrape)).not.toContain('_unknown');
  expect(series(scrape)).not.toContain('no_such_tool_9f3');
});
