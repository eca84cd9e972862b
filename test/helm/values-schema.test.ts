// helm/dispatch/values.schema.json: Helm checks the merged values against it before rendering, so
// a misspelt key or a value of the wrong type fails `helm install` / `upgrade` / `template` instead
// of rendering something else (found by the config audit: `graceMs: "30s"` rendered a drain of 0,
// `graceMS: 60000` the default 30000, `tls: {enabeld: true}` a plaintext server, all exiting 0).
import { cpSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { CHART, containerOf, envOf, render, renderObjects, tempDir, useRenderer, valuesFile } from './render-chart';

useRenderer({ reuseBuild: true });

const HEADER = "Error: values don't meet the specifications of the schema(s) in the following chart(s):\ndispatch:\n";

describe('values the schema refuses fail the render, naming the key', () => {
  it.each([
    ['a duration for graceMs', 'shutdown: {graceMs: "30s"}', '- shutdown.graceMs: Invalid type. Expected: integer, given: string'],
    ['a misspelt graceMs', 'shutdown: {graceMS: 60000}', '- shutdown: Additional property graceMS is not allowed'],
    ['a misspelt tls.enabled', 'tls: {enabeld: true, existingSecret: dispatch-tls}', '- tls: Additional property enabeld is not allowed'],
    ['a duration for preStopSleepSeconds', 'shutdown: {preStopSleepSeconds: 5s}', '- shutdown.preStopSleepSeconds: Invalid type. Expected: integer, given: string'],
    ['a fraction of a second', 'shutdown: {preStopSleepSeconds: 2.5}', '- shutdown.preStopSleepSeconds: Invalid type. Expected: integer, given: number'],
    ['a negative grace', 'shutdown: {graceMs: -1}', '- shutdown.graceMs: must be >= 0'],
    ['a misspelt top-level key', 'replicas: 3', '- (root): Additional property replicas is not allowed'],
    ['a misspelt nested key', 'redis: {deploy: {persistance: {size: 20Gi}}}', '- redis.deploy: Additional property persistance is not allowed'],
    ['a misspelt probe field', 'probes: {liveness: {failureTreshold: 5}}', '- probes.liveness: Additional property failureTreshold is not allowed'],
    ['a string for a boolean', 'auth: {enabled: "false"}', '- auth.enabled: Invalid type. Expected: boolean, given: string'],
    ['an unknown Redis mode', 'redis: {mode: replicated}', '- redis.mode: redis.mode must be one of the following: "standalone", "sentinel", "cluster", "none"'],
    ['an unknown Service type', 'service: {type: Ingress}', '- service.type: service.type must be one of the following: "ClusterIP", "NodePort", "LoadBalancer"'],
    ['an unsupported OTLP protocol', 'tracing: {protocol: http/xml}', '- tracing.protocol: tracing.protocol must be one of the following: "http/protobuf", "grpc", "http/json"'],
    ['a numeric image tag (YAML reads 7.4 as a number)', 'redis: {deploy: {image: {tag: 7.4}}}', '- redis.deploy.image.tag: Invalid type. Expected: string, given: number'],
    ['a port out of range', 'server: {port: 70000}', '- server.port: must be <= 65535'],
    ['a non-string annotation', 'podAnnotations: {example.com/scrape: true}', '- podAnnotations.example.com/scrape: Invalid type. Expected: string, given: boolean'],
  ])('%s', (_label, values, line) => {
    const r = render([valuesFile(values)]);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`${HEADER}${line}\n`);
  });

  it('lists every error at once', () => {
    const r = render([valuesFile('shutdown: {graceMs: "30s", graceMS: 60000}\ntls: {enabeld: true}')]);
    expect(r.stderr.split('\n').filter((l) => l.startsWith('- ')).sort()).toEqual([
      '- shutdown.graceMs: Invalid type. Expected: integer, given: string',
      '- shutdown: Additional property graceMS is not allowed',
      '- tls: Additional property enabeld is not allowed',
    ]);
  });

  it('checks the merged values: a later file cannot misspell what an earlier one set right', () => {
    const r = render([valuesFile('shutdown: {graceMs: 60000}'), valuesFile('shutdown: {gracems: 1000}')]);
    expect(r.stderr).toContain('- shutdown: Additional property gracems is not allowed');
  });
});

describe('values the schema accepts', () => {
  it('the defaults, and every values file the chart tests use, render', () => {
    for (const files of [[], [join(__dirname, 'values-sentinel-tls.yaml')], [join(__dirname, 'values-cluster-nohpa.yaml')]]) {
      expect(render(files).stderr).toBe('');
    }
  });

  it("every YAML example in the chart's README renders", () => {
    const readme = readFileSync(join(CHART, 'README.md'), 'utf8');
    const examples = [...readme.matchAll(/^( *)```yaml\n([\s\S]*?)^\1```$/gm)].map(([, indent, body]) =>
      body.split('\n').map((l) => l.slice(indent.length)).join('\n'),
    );
    expect(examples.length).toBeGreaterThanOrEqual(3);
    for (const example of examples) {
      const r = render([valuesFile(example)]);
      expect({ example, stderr: r.stderr, status: r.status }).toEqual({ example, stderr: '', status: 0 });
    }
  });

  it('keeps free-form what Kubernetes or dispatch define: config, resources, securityContexts, annotations, scheduling, extra env and volumes', () => {
    const objects = renderObjects([
      valuesFile(`
global: {imageRegistry: registry.example.com}
config: {tools: [{name: echo, builtin: {name: echo}}], limits: {max_sessions: 100}}
resources: {limits: {memory: 1Gi, cpu: "2", nvidia.com/gpu: 1}}
securityContext: {runAsNonRoot: true, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}, procMount: Default}
podAnnotations: {example.com/team: agents}
podLabels: {tier: backend}
nodeSelector: {kubernetes.io/arch: amd64}
tolerations: [{key: dedicated, operator: Equal, value: agents, effect: NoSchedule}]
affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [a]}]}]}}}
extraEnv: [{name: DISPATCH_TLS_REFRESH_MS, value: "30000"}]
extraVolumes: [{name: scratch, emptyDir: {}}]
extraVolumeMounts: [{name: scratch, mountPath: /scratch}]
probes: {readiness: {initialDelaySeconds: 3, successThreshold: 1}}
podDisruptionBudget: {maxUnavailable: "50%"}
tracing: {samplerArg: 0.1}
`),
    ]);
    expect(containerOf(objects).resources.limits['nvidia.com/gpu']).toBe(1);
    expect(containerOf(objects).readinessProbe).toMatchObject({ initialDelaySeconds: 3, successThreshold: 1 });
    expect(envOf(objects).DISPATCH_TLS_REFRESH_MS).toBe('30000');
  });
});

describe('without the schema (a renderer that skips it), the templates still refuse a shutdown time that is not a whole number', () => {
  const schemaless = () => {
    const copy = join(tempDir('chart-'), 'dispatch');
    cpSync(CHART, copy, { recursive: true });
    rmSync(join(copy, 'values.schema.json'));
    return copy;
  };

  it.each([
    ['shutdown: {graceMs: "30s"}', 'shutdown.graceMs must be a whole number >= 0, not "30s"'],
    ['shutdown: {preStopSleepSeconds: 5s}', 'shutdown.preStopSleepSeconds must be a whole number >= 0, not "5s"'],
    ['shutdown: {preStopSleepSeconds: 2.5}', 'shutdown.preStopSleepSeconds must be a whole number >= 0, not 2.5'],
    ['shutdown: {graceMs: -1000}', 'shutdown.graceMs must be a whole number >= 0, not -1000'],
    ['shutdown: {marginSeconds: 10s}', 'shutdown.marginSeconds must be a whole number >= 0, not "10s"'],
    ['shutdown: {terminationGracePeriodSeconds: 60s}', 'shutdown.terminationGracePeriodSeconds must be a whole number >= 0, not "60s"'],
  ])('%s', (values, message) => {
    const r = render([valuesFile(values)], schemaless());
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(message);
  });

  it('whole numbers render as before, and a missing key (--reuse-values from an older chart) is 0 as it was', () => {
    const env = envOf(renderObjects([valuesFile('shutdown: {graceMs: 60000, preStopSleepSeconds: 3}')]));
    expect(env.DISPATCH_GRACE_MS).toBe('60000');
    const r = render([valuesFile('shutdown: {terminationGracePeriodSeconds: null}')], schemaless());
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/terminationGracePeriodSeconds: 45$/m);
  });
});
