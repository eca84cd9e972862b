// What the chart hands dispatchd must be what dispatchd reads, in the form it reads it: every
// variable the Deployment sets is one the server (or OpenTelemetry through it) reads; the rendered
// environment and arguments parse with the server's own option parser into the ports the probes
// and Services use; the OTEL_* values mean what the values say (a sampler argument of 0, resource
// attributes holding "," or "="); and the values the server or the API server would refuse are
// refused at render time.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { envDetector } from '@opentelemetry/resources';
import { DAEMON_ENV } from '../../src/cli/dispatchd-env';
import { parseDaemonOptions } from '../../src/cli/dispatchd-options';
import { MAX_TIMER_MS } from '../../src/options/limits';
import { samplerFromEnv } from '../../src/telemetry/sampler-from-env';
import { ROOT, containerOf, render, renderObjects, useRenderer, valuesFile, type Obj } from './render-chart';

useRenderer({ reuseBuild: true });

/** The container's env as the kubelet gives it: Secret references as placeholders, $(VAR) expanded. */
function podEnv(objects: Obj[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const e of containerOf(objects).env as { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[]) {
    const raw = e.value ?? (e.valueFrom?.fieldRef ? `<${e.valueFrom.fieldRef.fieldPath}>` : 'secret-value');
    env[e.name] = raw.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (whole, name: string) => env[name] ?? whole);
  }
  return env;
}

/** Every OTEL_* name the server's sources mention (src/telemetry and the CLI). */
function otelNamesRead(): Set<string> {
  const names = new Set<string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts')) for (const m of readFileSync(path, 'utf8').matchAll(/\bOTEL_[A-Z_]*[A-Z]\b/g)) names.add(m[0]);
    }
  };
  walk(join(ROOT, 'src'));
  return names;
}

const SETS: [string, string[]][] = [
  ['default values', []],
  ['sentinel + mTLS + tracing', [join(__dirname, 'values-sentinel-tls.yaml')]],
  ['cluster + no HPA + port 50061', [join(__dirname, 'values-cluster-nohpa.yaml')]],
];

describe.each(SETS)('with %s', (_label, files) => {
  let objects: Obj[];
  beforeAll(() => {
    objects = renderObjects(files);
  });

  it('sets only variables dispatchd, OpenTelemetry or node read (and the pod fields they expand)', () => {
    const otel = otelNamesRead();
    const other = ['POD_NAME', 'POD_NAMESPACE', 'TMPDIR', 'NODE_OPTIONS'];
    const unknown = Object.keys(podEnv(objects)).filter((n) => !DAEMON_ENV.includes(n) && !otel.has(n) && !other.includes(n));
    expect(unknown).toEqual([]);
  });

  it("parses with the server's own option parser into the ports the probes and Services use", () => {
    const c = containerOf(objects);
    const options = parseDaemonOptions(c.args ?? [], podEnv(objects));
    const port = (name: string) => c.ports.find((p: { name: string }) => p.name === name)?.containerPort;
    expect(options.listen).toBe(`0.0.0.0:${port('grpc')}`);
    expect(options.metricsListen).toBe(port('metrics') === undefined ? undefined : `0.0.0.0:${port('metrics')}`);
    for (const probe of [c.startupProbe, c.livenessProbe, c.readinessProbe]) {
      if (options.tls) expect(probe.tcpSocket).toEqual({ port: 'grpc' });
      else expect(probe.grpc.port).toBe(port('grpc'));
    }
    expect(options.graceMs).toBeGreaterThan(0);
  });
});

describe('OTEL_* values mean what the values say', () => {
  const tracing = (extra: string) => podEnv(renderObjects([valuesFile(`tracing: {enabled: true, sampler: parentbased_traceidratio, ${extra}}`)]));

  it.each([
    ['0 (a number)', 'samplerArg: 0', 'TraceIdRatioBased{0}'],
    ['"0" (a string)', 'samplerArg: "0"', 'TraceIdRatioBased{0}'],
    ['0.25', 'samplerArg: 0.25', 'TraceIdRatioBased{0.25}'],
    ['empty (unset: a ratio of 1)', 'samplerArg: ""', 'TraceIdRatioBased{1}'],
  ])('a sampler argument of %s', (_label, values, root) => {
    expect(samplerFromEnv(tracing(values)).toString()).toContain(`root=${root}`);
  });

  it('resource attributes holding ",", "=" or "%" reach the spans, and the pod name with them', () => {
    const env = tracing('resourceAttributes: {team: "agents,search", "note": "a=b 100%"}');
    const saved = process.env.OTEL_RESOURCE_ATTRIBUTES;
    process.env.OTEL_RESOURCE_ATTRIBUTES = env.OTEL_RESOURCE_ATTRIBUTES;
    try {
      expect(envDetector.detect().attributes).toMatchObject({ team: 'agents,search', note: 'a=b 100%', 'k8s.pod.name': '<metadata.name>' });
    } finally {
      if (saved === undefined) delete process.env.OTEL_RESOURCE_ATTRIBUTES;
      else process.env.OTEL_RESOURCE_ATTRIBUTES = saved;
    }
  });
});

describe('server.extraArgs cannot override what the chart sets through variables', () => {
  it.each([
    ['--grace', '[--grace, "60000"]', 'shutdown.graceMs'],
    ['--grace=', '["--grace=60000"]', 'shutdown.graceMs'],
    ['--listen', '[--listen, "0.0.0.0:1"]', 'server.port'],
    ['--metrics-listen', '["--metrics-listen=0.0.0.0:1"]', 'metrics.enabled and metrics.port'],
    ['--insecure', '[--insecure]', 'server.insecure'],
    ['--redis', '[--redis, "redis://elsewhere:6379"]', 'redis.*'],
    ['--config', '[--config, /etc/other.yaml]', 'config'],
    ['--tls-cert', '[--tls-cert, /x.crt]', 'tls.*'],
  ])('refuses %s', (flag, args, key) => {
    const r = render([valuesFile(`server: {extraArgs: ${args}}`)]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(`server.extraArgs must not set ${flag.replace(/=$/, '')}: the chart sets it through its environment variable from ${key}`);
  });

  it('passes other flags through, after the entrypoint', () => {
    const c = containerOf(renderObjects([valuesFile('server: {extraArgs: [--tls-refresh-ms, "30000"]}')]));
    expect(c.args).toEqual(['--tls-refresh-ms', '30000']);
  });
});

describe('values the server or the API server would refuse are refused at render time', () => {
  it('a grace dispatchd refuses (over MAX_TIMER_MS), and the largest it takes', () => {
    const r = render([valuesFile(`shutdown: {graceMs: ${MAX_TIMER_MS + 1}}`)]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(`- shutdown.graceMs: must be <= ${MAX_TIMER_MS}`);
    const env = podEnv(renderObjects([valuesFile(`shutdown: {graceMs: ${MAX_TIMER_MS}}`)]));
    expect(parseDaemonOptions([], env).graceMs).toBe(MAX_TIMER_MS);
  });

  it.each([
    ['a liveness successThreshold other than 1', 'probes: {liveness: {successThreshold: 2}}', '- probes.liveness.successThreshold: probes.liveness.successThreshold must be one of the following: 1'],
    ['a startup successThreshold other than 1', 'probes: {startup: {successThreshold: 3}}', '- probes.startup.successThreshold: probes.startup.successThreshold must be one of the following: 1'],
    ['a readiness terminationGracePeriodSeconds', 'probes: {readiness: {terminationGracePeriodSeconds: 5}}', '- probes.readiness: Additional property terminationGracePeriodSeconds is not allowed'],
  ])('%s', (_label, values, line) => {
    const r = render([valuesFile(values)]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(line);
  });

  it('what the API server accepts still renders: successThreshold 1, a liveness terminationGracePeriodSeconds', () => {
    const c = containerOf(renderObjects([valuesFile('probes: {liveness: {successThreshold: 1, terminationGracePeriodSeconds: 10}, readiness: {successThreshold: 2}}')]));
    expect(c.livenessProbe).toMatchObject({ successThreshold: 1, terminationGracePeriodSeconds: 10 });
    expect(c.readinessProbe.successThreshold).toBe(2);
  });
});
