import { scrapeOnce, startMetricsApp } from '../telemetry/metrics-app';

// Prometheus' target_info names the service as the traces do (service.name dispatchd, or
// OTEL_SERVICE_NAME), so that a dashboard joins the two: it said unknown_service:node, the SDK's
// default, while every span said dispatchd.

const YAML = `tools:\n  - { name: echo, effect: read_only, input_schema: '{"type":"object"}', builtin: { name: echo } }`;

test('target_info carries service_name="dispatchd" by default', async () => {
  const d = await startMetricsApp(YAML);
  try {
    expect(await scrapeOnce(d.metricsPort)).toMatch(/^target_info\{[^}]*service_name="dispatchd"/m);
  } finally {
    await d.close();
  }
});

test('and OTEL_SERVICE_NAME when set, as the spans', async () => {
  process.env.OTEL_SERVICE_NAME = 'agents-dispatch';
  try {
    const d = await startMetricsApp(YAML);
    try {
      expect(await scrapeOnce(d.metricsPort)).toMatch(/^target_info\{[^}]*service_name="agents-dispatch"/m);
    } finally {
      await d.close();
    }
  } finally {
    delete process.env.OTEL_SERVICE_NAME;
  }
});
