import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import * as grpc from '@grpc/grpc-js';
import { createDispatchClient } from '../../src/client';
import { SILENT_LOGGER, type Logger } from '../../src/log';
import { otlpGrpcOptionsFromEnv, otlpTracesProtocol } from '../../src/telemetry';
import { eventually } from '../workers/worker-harness';
import { otlpGrpcExporter } from '../../src/telemetry/otlp-grpc-exporter';
import { requestFrame, RequestWriter } from '../../src/telemetry/otlp-request';
import type { EncodedBatch } from '../../src/telemetry/span-batcher';
import { startOtlpGrpcReceiver, startRawGrpcEndpoint, type OtlpGrpcReceiver } from './otlp-grpc-receiver';
import { startTcpProxy } from '../helpers/tcp-proxy';
import { expectTurnSpans, startTracedDaemon, startTracedTools, TRACED_TURN, traceparentOf, type TracedTools } from './traced-service';

/** A logger keeping its warnings, as `message {fields}`. */
function warningsLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  return { ...SILENT_LOGGER, warnings, warn: (message, fields) => void warnings.push(`${message} ${JSON.stringify(fields ?? {})}`) };
}

describe('the OTLP protocol and gRPC settings, from the OTEL_* variables', () => {
  test('the protocol: the traces variable over the generic one, http/protobuf by default, others reported', () => {
    expect(otlpTracesProtocol({})).toBe('http/protobuf');
    expect(otlpTracesProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toBe('grpc');
    expect(otlpTracesProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: ' grpc ' })).toBe('grpc');
    expect(otlpTracesProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' })).toBe('http/protobuf');
    expect(otlpTracesProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: ' ' })).toBe('grpc');
    const logger = warningsLogger();
    expect(otlpTracesProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' }, logger)).toBe('http/json');
    expect(otlpTracesProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/xml' }, logger)).toBe('http/protobuf');
    expect(logger.warnings).toEqual(['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL must be grpc, http/protobuf or http/json; using the default {"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL":"http/xml"}']);
  });

  test('the endpoint: http://localhost:4317 by default, the traces variable first, used as is; its scheme decides TLS', () => {
    expect(otlpGrpcOptionsFromEnv({})).toEqual({ endpoint: 'http://localhost:4317', address: 'localhost:4317', secure: false, headers: {}, timeoutMs: 10_000, compression: 'none' });
    const at = (env: NodeJS.ProcessEnv) => {
      const { endpoint, address, secure } = otlpGrpcOptionsFromEnv(env);
      return { endpoint, address, secure };
    };
    expect(at({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector:4317' })).toEqual({ endpoint: 'https://collector:4317', address: 'collector:4317', secure: true });
    expect(at({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector:4317', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:14317' })).toEqual({ endpoint: 'http://traces:14317', address: 'traces:14317', secure: false });
    expect(at({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector' }).address).toBe('collector:443');
    expect(at({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://[::1]:4317' }).address).toBe('[::1]:4317');
    // Without a scheme: TLS unless INSECURE is true (the traces variable first); with one, the scheme decides.
    expect(at({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4317' })).toEqual({ endpoint: 'collector:4317', address: 'collector:4317', secure: true });
    expect(at({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4317', OTEL_EXPORTER_OTLP_INSECURE: 'TRUE' }).secure).toBe(false);
    expect(at({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4317', OTEL_EXPORTER_OTLP_INSECURE: 'true', OTEL_EXPORTER_OTLP_TRACES_INSECURE: 'false' }).secure).toBe(true);
    expect(at({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector:4317', OTEL_EXPORTER_OTLP_INSECURE: 'true' }).secure).toBe(true);

    const logger = warningsLogger();
    expect(otlpGrpcOptionsFromEnv({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }, logger).address).toBe('collector:4318');
    expect(otlpGrpcOptionsFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'unix:///run/otel.sock' }, logger).address).toBe('localhost:4317');
    expect(logger.warnings).toEqual([
      'an OTLP/gRPC endpoint has no path; the path is ignored {"endpoint":"http://collector:4318/v1/traces"}',
      'OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL or host:port; using the default {"OTEL_EXPORTER_OTLP_ENDPOINT":"unix:///run/otel.sock"}',
    ]);
  });

  test('headers, timeout, compression and certificate files: each traces variable over its generic one', () => {
    const logger = warningsLogger();
    const options = otlpGrpcOptionsFromEnv(
      {
        OTEL_EXPORTER_OTLP_HEADERS: 'api-key=generic, x-team=a%20b,broken,=x',
        OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'api-key=traces',
        OTEL_EXPORTER_OTLP_TIMEOUT: '2500',
        OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '700',
        OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip',
        OTEL_EXPORTER_OTLP_CERTIFICATE: '/etc/ca.pem',
        OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE: '/etc/traces-ca.pem',
        OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: '/etc/client.pem',
        OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY: '/etc/client-key.pem',
      },
      logger,
    );
    expect(options).toMatchObject({
      headers: { 'api-key': 'traces', 'x-team': 'a b' },
      timeoutMs: 700,
      compression: 'gzip',
      certificateFile: '/etc/traces-ca.pem',
      clientCertificateFile: '/etc/client.pem',
      clientKeyFile: '/etc/client-key.pem',
    });
    expect(logger.warnings).toEqual([]);
    const bad = otlpGrpcOptionsFromEnv({ OTEL_EXPORTER_OTLP_TIMEOUT: 'soon', OTEL_EXPORTER_OTLP_TRACES_COMPRESSION: 'zstd' }, logger);
    expect(bad).toMatchObject({ timeoutMs: 10_000, compression: 'none' });
    expect(logger.warnings).toEqual([
      'OTEL_EXPORTER_OTLP_TIMEOUT must be a number of milliseconds > 0; using the default {"OTEL_EXPORTER_OTLP_TIMEOUT":"soon"}',
      'OTEL_EXPORTER_OTLP_TRACES_COMPRESSION must be gzip or none; using the default {"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION":"zstd"}',
    ]);
  });
});

/** A real ExportTraceServiceRequest (a resource and a scope, no spans), as the batcher sends it. */
function batch(): EncodedBatch {
  const writer = new RequestWriter(requestFrame({ attributes: { 'service.name': 'grpc-exporter-test' } }, { name: 'dispatch' }));
  return { bytes: writer.finish(), spans: 0 };
}

describe('the OTLP/gRPC exporter', () => {
  let receiver: OtlpGrpcReceiver;
  beforeAll(async () => {
    receiver = await startOtlpGrpcReceiver();
  });
  afterAll(() => receiver.close());
  beforeEach(() => {
    receiver.answer = grpc.status.OK;
    receiver.requests.length = 0;
  });
  const exporterFor = (env: NodeJS.ProcessEnv) => otlpGrpcExporter(otlpGrpcOptionsFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, ...env }));

  test('sends the batch’s bytes as they are, with the header metadata', async () => {
    const exporter = exporterFor({ OTEL_EXPORTER_OTLP_HEADERS: 'Api-Key=secret' });
    const sent = batch();
    try {
      await exporter.export(sent);
    } finally {
      await exporter.shutdown();
    }
    expect(receiver.requests).toEqual([Buffer.from(sent.bytes)]);
    expect(receiver.metadata.at(-1)!.get('api-key')).toEqual(['secret']);
  });

  test('a retryable status (UNAVAILABLE) is retried, as the HTTP exporter retries 503; another fails at once', async () => {
    const exporter = exporterFor({ OTEL_EXPORTER_OTLP_TIMEOUT: '5000' });
    try {
      receiver.answer = grpc.status.UNAVAILABLE;
      const exported = exporter.export(batch());
      await receiver.waitFor((r) => r.requests.length === 1);
      receiver.answer = grpc.status.OK;
      await exported;
      expect(receiver.requests).toHaveLength(2);

      receiver.answer = grpc.status.INVALID_ARGUMENT;
      await expect(exporter.export(batch())).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
      expect(receiver.requests).toHaveLength(3);
    } finally {
      await exporter.shutdown();
    }
  });

  test('an export that gets no answer by its deadline (a half-open connection) leaves its channel: the next goes on a new connection', async () => {
    const proxy = await startTcpProxy(Number(new URL(receiver.endpoint).port));
    const exporter = otlpGrpcExporter(otlpGrpcOptionsFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${proxy.port}`, OTEL_EXPORTER_OTLP_TIMEOUT: '500' }));
    try {
      await exporter.export(batch());
      const before = receiver.requests.length;
      proxy.freeze();
      await expect(exporter.export(batch())).rejects.toMatchObject({ code: grpc.status.DEADLINE_EXCEEDED });
      await exporter.export(batch());
      expect(receiver.requests).toHaveLength(before + 1);
      expect(proxy.connections()).toBe(2);
    } finally {
      await exporter.shutdown();
      await proxy.close();
    }
  });

  test('no retry would start past the deadline (OTEL_EXPORTER_OTLP_TIMEOUT): the export fails with the last status', async () => {
    const exporter = exporterFor({ OTEL_EXPORTER_OTLP_TIMEOUT: '300' });
    receiver.answer = grpc.status.UNAVAILABLE;
    const started = Date.now();
    try {
      await expect(exporter.export(batch())).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE, details: 'receiver refuses' });
    } finally {
      await exporter.shutdown();
    }
    expect(receiver.requests).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  test('stopRetrying gives up a retry being waited for at once, and later exports are tried once', async () => {
    const exporter = exporterFor({ OTEL_EXPORTER_OTLP_TIMEOUT: '10000' });
    receiver.answer = grpc.status.UNAVAILABLE;
    const before = receiver.requests.length;
    try {
      const exported = exporter.export(batch());
      const settled = exported.then(
        () => Date.now(),
        () => Date.now(),
      );
      await receiver.waitFor((r) => r.requests.length === before + 1);
      const stopped = Date.now();
      exporter.stopRetrying!();
      await expect(exported).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
      // The first retry would have waited 0.8-1.2 s.
      expect((await settled) - stopped).toBeLessThan(300);
      await expect(exporter.export(batch())).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
      expect(receiver.requests.length - before).toBe(2);
    } finally {
      await exporter.shutdown();
    }
  });

  test('with gzip compression the message goes compressed, and unchanged once inflated', async () => {
    const raw = await startRawGrpcEndpoint();
    const exporter = otlpGrpcExporter(otlpGrpcOptionsFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: raw.endpoint, OTEL_EXPORTER_OTLP_TRACES_COMPRESSION: 'gzip' }));
    const sent = batch();
    try {
      await exporter.export(sent);
    } finally {
      await exporter.shutdown();
      await raw.close();
    }
    const [{ headers, body }] = raw.received;
    expect(headers[':path']).toBe('/opentelemetry.proto.collector.trace.v1.TraceService/Export');
    expect(headers['grpc-encoding']).toBe('gzip');
    expect(body[0]).toBe(1); // the compressed flag of the gRPC frame
    expect(body.readUInt32BE(1)).toBe(body.length - 5);
    expect(gunzipSync(body.subarray(5))).toEqual(Buffer.from(sent.bytes));
  });

  test('TLS: an https endpoint is trusted through OTEL_EXPORTER_OTLP_CERTIFICATE, and refused without it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dispatch-otlp-tls-'));
    const cert = join(dir, 'cert.pem');
    const key = join(dir, 'key.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost'], { stdio: 'ignore', timeout: 10_000 });
    const tls = await startOtlpGrpcReceiver({ cert: readFileSync(cert), key: readFileSync(key) });
    const trusted = otlpGrpcExporter(otlpGrpcOptionsFromEnv({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: tls.endpoint, OTEL_EXPORTER_OTLP_CERTIFICATE: cert }));
    const untrusted = otlpGrpcExporter(otlpGrpcOptionsFromEnv({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: tls.endpoint, OTEL_EXPORTER_OTLP_TIMEOUT: '300' }));
    try {
      expect(tls.endpoint).toMatch(/^https:/);
      await trusted.export(batch());
      expect(tls.requests).toHaveLength(1);
      await expect(untrusted.export(batch())).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
      expect(tls.requests).toHaveLength(1);
    } finally {
      await trusted.shutdown();
      await untrusted.shutdown();
      await tls.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('dispatchd exporting over OTLP/gRPC', () => {
  let traced: TracedTools;
  let receiver: OtlpGrpcReceiver;
  beforeAll(async () => {
    traced = await startTracedTools();
    receiver = await startOtlpGrpcReceiver();
  });
  afterAll(async () => {
    await traced.close();
    await receiver.close();
  });
  beforeEach(() => {
    receiver.answer = grpc.status.OK;
  });
  /** dispatchd exporting to the receiver over gRPC at once (50 ms batches), each export given `timeoutMs` with its retries. */
  const exportingDaemon = (timeoutMs: number, scheduleDelayMs = 50) =>
    startTracedDaemon(traced.configFile, {
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_TIMEOUT: String(timeoutMs),
      OTEL_BSP_SCHEDULE_DELAY: String(scheduleDelayMs),
    });

  test('spans reach a real OTLP/gRPC receiver, parented under the caller’s traceparent, with OTEL_EXPORTER_OTLP_HEADERS as metadata', async () => {
    const trace = '6df92f3577b34da6a3ce929d0e0e4738';
    const server = await startTracedDaemon(traced.configFile, {
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_HEADERS: 'api-key=secret,x-tenant=generic',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-tenant=traces',
      OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip',
      OTEL_BSP_SCHEDULE_DELAY: '50',
      OTEL_SERVICE_NAME: 'dispatch-over-grpc',
    });
    const client = createDispatchClient(server.address);
    try {
      await client.dispatch(TRACED_TURN, { metadata: { traceparent: traceparentOf(trace) } });
      await receiver.waitFor((r) => r.spans.filter((s) => s.traceId === trace).length === 6);
    } finally {
      client.close();
      await server.stop();
    }
    const { turn } = expectTurnSpans(receiver.spans.filter((s) => s.traceId === trace));
    expect(turn.resource['service.name']).toBe('dispatch-over-grpc');
    expect(turn.scope).toBe('dispatch');
    const metadata = receiver.metadata.at(-1)!;
    expect(metadata.get('api-key')).toEqual(['secret']);
    expect(metadata.get('x-tenant')).toEqual(['traces']);
  });

  test('a receiver answering UNAVAILABLE breaks no call: the export is retried, then its spans are dropped and logged, as over HTTP', async () => {
    const trace = '7ef92f3577b34da6a3ce929d0e0e4739';
    const later = '8ff92f3577b34da6a3ce929d0e0e473a';
    receiver.answer = grpc.status.UNAVAILABLE;
    const requestsBefore = receiver.requests.length;
    // The turn's spans in one batch: with a 50 ms delay a turn slowed by a loaded machine (263 ms
    // seen in CI) went out in two, and the second, still retrying when the receiver came back, arrived.
    const server = await exportingDaemon(1_500, 1_000);
    const client = createDispatchClient(server.address);
    try {
      const refused = await client.dispatch(TRACED_TURN, { metadata: { traceparent: traceparentOf(trace) } });
      expect(refused.results.map((r) => [r.toolCallId, r.isError])).toEqual([
        ['w1', false],
        ['f1', false],
      ]);
      await eventually(() => server.d.stderr().includes('trace export failed; its spans are lost'), 10_000, 'the export failure in the log');
      expect(receiver.requests.length - requestsBefore).toBeGreaterThanOrEqual(2); // retried before giving up
      expect(server.d.stderr()).toContain('14 UNAVAILABLE: receiver refuses');

      receiver.answer = grpc.status.OK;
      const accepted = await client.dispatch({ sessionId: 'after-refusal', calls: [{ id: 'w2', name: 'weather', arguments: '{}' }] }, { metadata: { traceparent: traceparentOf(later) } });
      expect(accepted.results.map((r) => r.isError)).toEqual([false]);
      await receiver.waitFor((r) => r.spans.filter((s) => s.traceId === later).length === 3);
    } finally {
      client.close();
      await server.stop();
    }
    expect(receiver.spans.filter((s) => s.traceId === trace)).toHaveLength(0);
  });

  test('a receiver that stays UNAVAILABLE does not hold SIGTERM: the last flush is tried once, without the retry waits', async () => {
    receiver.answer = grpc.status.UNAVAILABLE;
    const before = receiver.requests.length;
    // Retries would go on for up to 20 s (waits of 1, 1.5, 2.25, 3.4, 5 s).
    const server = await exportingDaemon(20_000);
    const client = createDispatchClient(server.address);
    let stopped = 0;
    try {
      const answer = await client.dispatch(TRACED_TURN, { metadata: { traceparent: traceparentOf('9af92f3577b34da6a3ce929d0e0e473b') } });
      expect(answer.results.map((r) => r.isError)).toEqual([false, false]);
      // The batch was refused once and its first retry is being waited for.
      await receiver.waitFor((r) => r.requests.length > before);
    } finally {
      client.close();
      stopped = Date.now();
      await server.stop();
    }
    expect(Date.now() - stopped).toBeLessThan(3_000);
    expect(server.d.stderr()).toContain('trace export failed; its spans are lost');
  });
});
