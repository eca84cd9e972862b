import { DispatchMode } from '../../gen/dispatch/v1/dispatch_pb';
import { closedPort } from '../helpers/servers';
import { startMetricsApp, type MetricsApp } from './metrics-app';

// Found by a probe of observability: spans dropped for a full export queue, or lost with a batch
// that failed to export, were counted only in log lines; /metrics had no series to alert on.

const ENV = ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_BSP_MAX_QUEUE_SIZE', 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 'OTEL_BSP_SCHEDULE_DELAY'] as const;
const saved = Object.fromEntries(ENV.map((name) => [name, process.env[name]]));
let app: MetricsApp;
beforeAll(async () => {
  // A receiver that is not there (connections refused), and a queue of 4 spans.
  Object.assign(process.env, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `http://127.0.0.1:${await closedPort()}/v1/traces`, OTEL_BSP_MAX_QUEUE_SIZE: '4', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '4', OTEL_BSP_SCHEDULE_DELAY: '10' });
  app = await startMetricsApp('tools:\n  - { name: echo, effect: read_only, skip_memoize: true, concurrency_safe: true, builtin: { name: echo } }\n');
});
afterAll(async () => {
  await app?.close();
  for (const name of ENV) if (saved[name] === undefined) delete process.env[name];
  else process.env[name] = saved[name];
});

const valueOf = async (name: string) => (await app.scrape()).samples.filter((s) => s.name === name).reduce((sum, s) => sum + s.value, 0);

test('trace spans dropped and batches failed are counted on /metrics', async () => {
  const calls = Array.from({ length: 20 }, (_, i) => ({ id: `c${i}`, name: 'echo', arguments: JSON.stringify({ i }) }));
  await app.dispatch.dispatch({ sessionId: 's', mode: DispatchMode.PARALLEL, calls });
  expect(await valueOf('dispatch_trace_spans_dropped_total')).toBeGreaterThan(0);
  const deadline = Date.now() + 15_000;
  while ((await valueOf('dispatch_trace_export_failures_total')) === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  expect(await valueOf('dispatch_trace_export_failures_total')).toBeGreaterThan(0);
}, 30_000);
