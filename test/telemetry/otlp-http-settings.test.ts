import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { Logger } from '../../src/log';
import { createTracing } from '../../src/telemetry';
import { createDispatchClient } from '../../src/client';
import { decodeExportTraceRequest, type ReceivedSpan } from './otlp-receiver';
import { startTracedDaemon, startTracedTools, TRACED_TURN, traceparentOf, type TracedTools } from './traced-service';

// Over OTLP/HTTP (the default protocol) the OTEL_EXPORTER_OTLP_* variables were left to
// OpenTelemetry, which reads process.env and reports through `diag`, wired to nothing: a bad
// TIMEOUT or an unreadable CERTIFICATE said nothing (over gRPC both were logged). Dispatch now reads
// them for both transports, and routes OpenTelemetry's own warnings (diag) to its log.

jest.setTimeout(30_000);

function recordingLogger(): { logger: Logger; warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, logger: { debug() {}, info() {}, error() {}, warn: (message, fields) => void warnings.push(`${message} ${JSON.stringify(fields ?? {})}`) } };
}

test('over HTTP a bad TIMEOUT, COMPRESSION or endpoint and unreadable certificate files are logged, as over gRPC', async () => {
  const env = {
    OTEL_EXPORTER_OTLP_ENDPOINT: 'https://127.0.0.1:9',
    OTEL_EXPORTER_OTLP_TIMEOUT: 'abc',
    OTEL_EXPORTER_OTLP_TRACES_COMPRESSION: 'zstd',
    OTEL_EXPORTER_OTLP_CERTIFICATE: '/nonexistent/ca.pem',
    OTEL_EXPORTER_OTLP_CLIENT_KEY: '/nonexistent/key.pem',
  };
  const warned = (protocol: string) => {
    const { logger, warnings } = recordingLogger();
    const tracing = createTracing({ ...env, OTEL_EXPORTER_OTLP_PROTOCOL: protocol }, logger);
    expect(tracing.tracer).toBeDefined();
    return { tracing, warnings: warnings.map((w) => w.replace(/"error":"[^"]*"/, '"error":"…"')) };
  };
  const http = warned('http/protobuf');
  const grpc = warned('grpc');
  try {
    expect(http.warnings).toEqual([
      'OTEL_EXPORTER_OTLP_TIMEOUT must be a number of milliseconds > 0; using the default {"OTEL_EXPORTER_OTLP_TIMEOUT":"abc"}',
      'OTEL_EXPORTER_OTLP_TRACES_COMPRESSION must be gzip or none; using the default {"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION":"zstd"}',
      'trace export: cannot read the root certificate file (OTEL_EXPORTER_OTLP_CERTIFICATE); going on without it {"path":"/nonexistent/ca.pem","error":"…"}',
      'trace export: cannot read the client key file (OTEL_EXPORTER_OTLP_CLIENT_KEY); going on without it {"path":"/nonexistent/key.pem","error":"…"}',
    ]);
    expect(grpc.warnings).toEqual(http.warnings);
  } finally {
    await http.tracing.shutdown();
    await grpc.tracing.shutdown();
  }

  const { logger, warnings } = recordingLogger();
  await createTracing({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'collector:4318' }, logger).shutdown();
  expect(warnings).toEqual(['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http(s) URL; using the default {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT":"collector:4318"}']);
});

/** An OTLP/HTTPS receiver that records each request and answers with a partial success. */
interface PartialReceiver {
  readonly url: string;
  readonly requests: { path: string; headers: Record<string, unknown>; spans: ReceivedSpan[] }[];
  close(): Promise<void>;
}

async function startPartialReceiver(cert: Buffer, key: Buffer): Promise<PartialReceiver> {
  const requests: PartialReceiver['requests'] = [];
  const message = Buffer.from('spans too old');
  const partial = Buffer.concat([Buffer.from([0x08, 0x02, 0x12, message.length]), message]);
  const answer = Buffer.concat([Buffer.from([0x0a, partial.length]), partial]);
  const server: Server = createServer({ cert, key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
      requests.push({ path: req.url ?? '', headers: req.headers, spans: decodeExportTraceRequest(body) });
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://localhost:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('dispatchd exporting over OTLP/HTTPS', () => {
  let traced: TracedTools;
  let dir: string;
  let receiver: PartialReceiver;
  let cert: string;
  beforeAll(async () => {
    traced = await startTracedTools();
    dir = mkdtempSync(join(tmpdir(), 'dispatch-otlp-https-'));
    cert = join(dir, 'cert.pem');
    const key = join(dir, 'key.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost'], { stdio: 'ignore', timeout: 10_000 });
    receiver = await startPartialReceiver(readFileSync(cert), readFileSync(key));
  });
  afterAll(async () => {
    await receiver?.close();
    await traced?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('trusts OTEL_EXPORTER_OTLP_CERTIFICATE, appends /v1/traces, sends the headers gzipped, and logs the collector’s partial success (OpenTelemetry diag)', async () => {
    const trace = '7af92f3577b34da6a3ce929d0e0e4738';
    const server = await startTracedDaemon(traced.configFile, {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_CERTIFICATE: cert,
      OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-team=a%20b',
      OTEL_BSP_SCHEDULE_DELAY: '50',
    });
    const client = createDispatchClient(server.address);
    try {
      await client.dispatch(TRACED_TURN, { metadata: { traceparent: traceparentOf(trace) } });
      for (let i = 0; i < 200 && !/Partial Success/.test(server.d.stderr()); i++) await new Promise((r) => setTimeout(r, 25));
    } finally {
      client.close();
      await server.stop();
    }
    const request = receiver.requests.find((r) => r.spans.some((s) => s.traceId === trace));
    expect(request).toMatchObject({ path: '/v1/traces', headers: { 'x-team': 'a b', 'content-encoding': 'gzip', 'content-type': 'application/x-protobuf' } });
    // Its tool's 503 is logged too ("a tool call failed"): the collector's lines are what is checked.
    const lines = server.d.stderr().split('\n').filter((line) => line.includes('"level":"warn"') && !line.includes('"message":"a tool call failed"'));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ message: 'opentelemetry: Received Partial Success response:', details: ['{"rejectedSpans":2,"errorMessage":"spans too old"}'] });
  });
});
