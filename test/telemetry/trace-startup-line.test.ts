import type { Logger } from '../../src/log';
import { createTracing } from '../../src/telemetry';
import { startOtlpGrpcReceiver, type OtlpGrpcReceiver } from './otlp-grpc-receiver';
import { startTracedApp } from './traced-app';

// Nothing in the log said whether traces were exported, nor where: a typo in an OTEL_* variable
// left them off in silence, and an operator could not tell which collector a replica sent to.
// At start-up one info line now says `trace export on` (exporter, protocol, endpoint, sampler) or
// `trace export off` (why), the endpoint's credentials redacted.

let receiver: OtlpGrpcReceiver;
beforeAll(async () => {
  receiver = await startOtlpGrpcReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

/** A logger that keeps its info lines whose message starts `trace export`. */
function traceLines(): { logger: Logger; lines: [string, Record<string, unknown> | undefined][] } {
  const lines: [string, Record<string, unknown> | undefined][] = [];
  const info = (message: string, fields?: Record<string, unknown>) => void (message.startsWith('trace export') && lines.push([message, fields]));
  return { lines, logger: { debug() {}, info, warn() {}, error() {} } };
}

test('traces on over gRPC: one line with the exporter, the endpoint and the sampler', async () => {
  const { logger, lines } = traceLines();
  const env = { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc', OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' };
  await createTracing(env, logger).shutdown();
  expect(lines).toHaveLength(1);
  expect(lines[0]![0]).toBe('trace export on');
  expect(lines[0]![1]).toMatchObject({ exporter: 'otlp', protocol: 'grpc', endpoint: receiver.endpoint });
  expect(String(lines[0]![1]!.sampler)).toMatch(/ParentBased.*TraceIdRatioBased\{0\.25\}/);
});

test('traces on over HTTP: the URL spans go to, its credentials redacted', async () => {
  const { logger, lines } = traceLines();
  await createTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:s3cret@127.0.0.1:9' }, logger).shutdown();
  expect(lines).toEqual([['trace export on', { exporter: 'otlp', protocol: 'http/protobuf', endpoint: 'http://REDACTED:REDACTED@127.0.0.1:9/v1/traces', sampler: expect.stringMatching(/^ParentBased\{root=AlwaysOnSampler/) }]]);
});

test('traces off: one line with the reason', async () => {
  const reasons = async (env: NodeJS.ProcessEnv) => {
    const { logger, lines } = traceLines();
    await createTracing(env, logger).shutdown();
    expect(lines.map(([message]) => message)).toEqual(['trace export off']);
    return lines[0]![1]!.reason;
  };
  expect(await reasons({})).toBe('no OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_TRACES_EXPORTER=otlp');
  expect(await reasons({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_SDK_DISABLED: 'true' })).toBe('OTEL_SDK_DISABLED=true');
  expect(await reasons({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_TRACES_EXPORTER: 'none' })).toBe('OTEL_TRACES_EXPORTER=none');
  expect(await reasons({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_TRACES_EXPORTER: 'console' })).toBe('OTEL_TRACES_EXPORTER names no otlp');
});

test('the app logs the line once as it starts', async () => {
  const { logger, lines } = traceLines();
  const app = await startTracedApp('tools: []\n', { logger });
  await app.close();
  expect(lines).toEqual([['trace export on', expect.objectContaining({ protocol: 'grpc', endpoint: app.receiver.endpoint })]]);
});
