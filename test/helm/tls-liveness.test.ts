// With TLS the kubelet's gRPC probe cannot reach the server, so the probes are TCP checks, which
// the kernel answers for a process whose event loop is stuck. probes.liveness.tlsCheck: metrics
// checks liveness with GET /metrics on the metrics port instead (what dispatchd's metrics server
// answers, and only from a running event loop). Not the default: each check renders every series,
// as a scrape does (docs/metrics.md), and takes one of the endpoint's connections.
import { request } from 'node:http';
import { join } from 'node:path';
import { startMetricsServer } from '../../src/telemetry/metrics-server';
import { containerOf, envOf, problems, render, renderObjects, useRenderer, valuesFile } from './render-chart';

useRenderer({ reuseBuild: true });

const TLS = join(__dirname, 'values-sentinel-tls.yaml');
const METRICS_CHECK = 'probes: {liveness: {tlsCheck: metrics}}';

it('keeps every probe a TCP check of the gRPC port with TLS and metrics by default', () => {
  const objects = renderObjects([TLS]);
  const c = containerOf(objects);
  expect(envOf(objects).DISPATCH_METRICS_LISTEN).toBeDefined();
  for (const probe of [c.startupProbe, c.livenessProbe, c.readinessProbe]) {
    expect(probe.tcpSocket).toEqual({ port: 'grpc' });
    expect(probe.httpGet).toBeUndefined();
  }
});

it('with tlsCheck metrics, liveness GETs /metrics on the metrics port; startup and readiness stay TCP', () => {
  const objects = renderObjects([TLS, valuesFile('probes: {liveness: {tlsCheck: metrics, periodSeconds: 30, timeoutSeconds: 5}}')]);
  const c = containerOf(objects);
  expect(problems(objects)).toEqual([]);
  expect(c.livenessProbe).toEqual({ httpGet: { path: '/metrics', port: 'metrics' }, periodSeconds: 30, timeoutSeconds: 5, failureThreshold: 3 });
  expect(c.startupProbe.tcpSocket).toEqual({ port: 'grpc' });
  expect(c.readinessProbe.tcpSocket).toEqual({ port: 'grpc' });
  // The port it names is the one dispatchd serves metrics on.
  const metricsPort = c.ports.find((p: { name: string }) => p.name === 'metrics').containerPort;
  expect(envOf(objects).DISPATCH_METRICS_LISTEN).toBe(`0.0.0.0:${metricsPort}`);
});

it('without TLS, tlsCheck changes nothing: the probes are gRPC health checks', () => {
  const c = containerOf(renderObjects([valuesFile(METRICS_CHECK)]));
  for (const probe of [c.startupProbe, c.livenessProbe, c.readinessProbe]) expect(probe.grpc.port).toBe(50051);
  expect(c.livenessProbe.tlsCheck).toBeUndefined();
});

it('refuses tlsCheck metrics with TLS but without metrics, and a check it does not know', () => {
  const off = render([TLS, valuesFile(`${METRICS_CHECK}\nmetrics: {enabled: false, serviceMonitor: {enabled: false}}`)]);
  expect(off.status).not.toBe(0);
  expect(off.stderr).toContain('probes.liveness.tlsCheck metrics needs metrics.enabled');
  const unknown = render([valuesFile('probes: {liveness: {tlsCheck: grpc}}')]);
  expect(unknown.stderr).toContain('- probes.liveness.tlsCheck: probes.liveness.tlsCheck must be one of the following: "tcp", "metrics"');
});

it("the rendered path is one dispatchd's metrics server answers (200; any other path is 404, which the kubelet counts as a failure)", async () => {
  const probe = containerOf(renderObjects([TLS, valuesFile(METRICS_CHECK)])).livenessProbe.httpGet;
  const server = await startMetricsServer('127.0.0.1:0', (_request, response) => response.end('# ok\n'));
  const get = (path: string) =>
    new Promise<number>((resolve, reject) => {
      request({ host: '127.0.0.1', port: server.port, path }, (response) => {
        response.resume();
        resolve(response.statusCode!);
      })
        .on('error', reject)
        .end();
    });
  try {
    expect(await get(probe.path)).toBe(200);
    expect(await get('/healthz')).toBe(404);
  } finally {
    await server.close();
  }
});
