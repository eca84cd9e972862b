// The Helm chart's CI check (there is no helm binary or cluster here): render helm/dispatch
// (render-chart.ts), validate every object against the Kubernetes OpenAPI schemas, and assert the
// production-shape facts the chart promises. helm/dispatch/README.md says what this
// covers and what only a real cluster shows.
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isMap, parseDocument, type YAMLMap } from 'yaml';
import { parseConfig } from '../../src/config';
import { freeRedisPort } from '../helpers/redis-server';
import {
  bundledRedisOf,
  CHART,
  checksumOf,
  containerOf,
  deploymentOf,
  directivesOf,
  envOf,
  find,
  FULLNAME,
  NAMESPACE,
  problems,
  REDIS,
  redisConfOf,
  redisContainerOf,
  redisSetOf,
  render,
  renderNotes,
  renderObjects,
  tempDir,
  useRenderer,
  valuesFile,
  type Obj,
} from './render-chart';

useRenderer({ reuseBuild: true });

const SETS: [string, string[]][] = [
  ['default values', []],
  ['sentinel + mTLS + auth + ServiceMonitor + tracing', [join(__dirname, 'values-sentinel-tls.yaml')]],
  ['cluster + no HPA + custom resources and port', [join(__dirname, 'values-cluster-nohpa.yaml')]],
];

describe.each(SETS)('chart rendered with %s', (_label, files) => {
  let objects: Obj[] = [];
  beforeAll(() => {
    objects = renderObjects(files);
  });

  it('renders objects that all pass the Kubernetes schemas', () => {
    expect(objects.length).toBeGreaterThanOrEqual(5);
    for (const kind of ['Deployment', 'Service', 'ConfigMap', 'ServiceAccount', 'PodDisruptionBudget']) {
      expect(objects.map((o) => o.kind)).toContain(kind);
    }
    expect(problems(objects)).toEqual([]);
  });

  it('runs the pod non-root with a read-only root filesystem and a writable /tmp', () => {
    const pod = deploymentOf(objects).spec.template.spec;
    const c = containerOf(objects);
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001, seccompProfile: { type: 'RuntimeDefault' } });
    expect(c.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 10001,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    const tmp = c.volumeMounts.find((m: { mountPath: string }) => m.mountPath === '/tmp');
    expect(pod.volumes.find((v: { name: string }) => v.name === tmp.name).emptyDir).toBeDefined();
    expect(pod.automountServiceAccountToken).toBe(false);
  });

  it('probes the gRPC port, and the pod outlives preStop + drain', () => {
    const pod = deploymentOf(objects).spec.template.spec;
    const c = containerOf(objects);
    const env = envOf(objects);
    const grpcPort = c.ports.find((p: { name: string }) => p.name === 'grpc').containerPort;
    expect(env.DISPATCH_LISTEN).toBe(`0.0.0.0:${grpcPort}`);
    for (const probe of [c.livenessProbe, c.readinessProbe, c.startupProbe]) {
      if (env.DISPATCH_TLS_CERT) expect(probe.tcpSocket).toEqual({ port: 'grpc' });
      else expect(probe.grpc.port).toBe(grpcPort);
    }
    if (!env.DISPATCH_TLS_CERT) expect(c.readinessProbe.grpc.service).toBe('dispatch.v1.DispatchService');
    const sleep = c.lifecycle.preStop.exec.command;
    expect(sleep[0]).toBe('sleep');
    const preStop = Number(sleep[1]);
    expect(preStop).toBeGreaterThan(0);
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(preStop + Number(env.DISPATCH_GRACE_MS) / 1000);
  });

  it('exposes gRPC as an HTTP/2 port named grpc, on a virtual-IP and a headless Service', () => {
    const tls = Boolean(envOf(objects).DISPATCH_TLS_CERT);
    const svc = find(objects, 'Service')!;
    const headless = find(objects, 'Service', `${FULLNAME}-headless`)!;
    expect(headless.spec.clusterIP).toBe('None');
    for (const s of [svc, headless]) {
      const grpc = s.spec.ports.find((p: { name: string }) => p.name === 'grpc');
      expect(grpc).toMatchObject({ targetPort: 'grpc', protocol: 'TCP' });
      if (tls) expect(grpc.appProtocol).toBeUndefined();
      else expect(grpc.appProtocol).toBe('kubernetes.io/h2c');
      expect(s.spec.selector).toEqual(deploymentOf(objects).spec.selector.matchLabels);
    }
    expect(headless.spec.ports.map((p: { name: string }) => p.name)).toEqual(['grpc']);
  });

  it('mounts the config and annotates the pod with its checksum', () => {
    const cm = find(objects, 'ConfigMap')!;
    expect(cm.data['config.yaml']).toMatch(/^tools:/m); // keys sorted: the default `limits:` comes first
    expect(() => parseConfig(cm.data['config.yaml'], 'config.yaml')).not.toThrow(); // the server's own parser
    expect(checksumOf(objects)).toMatch(/^[0-9a-f]{64}$/);
    expect(envOf(objects).DISPATCH_CONFIG).toBe('/etc/dispatch/config/config.yaml');
  });
});

describe('chart specifics per value set', () => {
  it('defaults: the bundled standalone Redis, HPA owns the replica count, no ServiceMonitor, auth from a Secret', () => {
    const objects = renderObjects([]);
    const env = envOf(objects);
    expect(env.DISPATCH_REDIS_URL).toBe(`redis://${REDIS}:6379/0`);
    expect(env.DISPATCH_REDIS_PASSWORD).toEqual({ secretKeyRef: { name: `${REDIS}-auth`, key: 'redis-password' } });
    expect(env.OTEL_TRACES_EXPORTER).toBe('none');
    expect(env.DISPATCH_INSECURE).toBeUndefined();
    expect(env.DISPATCH_AUTH_TOKENS_FILE).toBe('/etc/dispatch/auth/tokens.yaml');
    const volumes = deploymentOf(objects).spec.template.spec.volumes;
    expect(volumes.find((v: { name: string }) => v.name === 'auth-tokens').secret.secretName).toBe(`${FULLNAME}-auth`);
    expect(deploymentOf(objects).spec.replicas).toBeUndefined();
    expect(find(objects, 'HorizontalPodAutoscaler')!.spec).toMatchObject({
      scaleTargetRef: { kind: 'Deployment', name: FULLNAME },
      minReplicas: 2,
    });
    expect(find(objects, 'PodDisruptionBudget')!.spec.maxUnavailable).toBe(1);
    expect(objects.find((o) => o.kind === 'ServiceMonitor')).toBeUndefined();
  });

  it('sentinel + TLS: sentinel URL, password and TLS from Secrets, ServiceMonitor, OTLP to Jaeger', () => {
    const objects = renderObjects([join(__dirname, 'values-sentinel-tls.yaml')]);
    const env = envOf(objects);
    expect(env.DISPATCH_REDIS_URL).toBe(
      'redis-sentinel://redis-node-0.redis-headless.data.svc:26379,redis-node-1.redis-headless.data.svc:26379,' +
        'redis-node-2.redis-headless.data.svc:26379/mymaster',
    );
    expect(env.DISPATCH_REDIS_PASSWORD).toEqual({ secretKeyRef: { name: 'redis-auth', key: 'redis-password' } });
    expect(env).toMatchObject({
      DISPATCH_TLS_CERT: '/etc/dispatch/tls/tls.crt',
      DISPATCH_TLS_KEY: '/etc/dispatch/tls/tls.key',
      DISPATCH_TLS_CA: '/etc/dispatch/tls/ca.crt',
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger-collector.observability:4318',
      OTEL_SERVICE_NAME: FULLNAME,
      OTEL_TRACES_SAMPLER_ARG: '0.25',
    });
    expect(env.OTEL_RESOURCE_ATTRIBUTES).toContain('deployment.environment=production');
    const volumes = deploymentOf(objects).spec.template.spec.volumes;
    expect(volumes.find((v: { name: string }) => v.name === 'auth-tokens').secret.secretName).toBe('dispatch-tokens');
    expect(volumes.find((v: { name: string }) => v.name === 'tls').secret.secretName).toBe('dispatch-tls');
    const sm = find(objects, 'ServiceMonitor')!;
    expect(sm.metadata.labels.release).toBe('kube-prometheus-stack');
    expect(sm.spec.endpoints).toEqual([{ port: 'metrics', path: '/metrics', interval: '15s', scrapeTimeout: '10s' }]);
    expect(find(objects, 'Service')!.spec.ports.map((p: { name: string }) => p.name)).toEqual(['grpc']);
    const config = parseConfig(find(objects, 'ConfigMap')!.data['config.yaml'], 'config.yaml');
    expect(config.tools.map((t) => t.name)).toEqual(['get_weather', 'echo']);
    expect(find(objects, 'ConfigMap')!.data['config.yaml']).toContain(`http://weather.${NAMESPACE}.svc:8080/call`);
  });

  it('cluster without HPA: cluster URL, fixed replicas, custom resources, no metrics', () => {
    const objects = renderObjects([join(__dirname, 'values-cluster-nohpa.yaml')]);
    const env = envOf(objects);
    expect(env.DISPATCH_REDIS_URL).toMatch(/^redis-cluster:\/\/redis-cluster-0\.[^,]+:6379,redis-cluster-1\.[^,]+:6379,redis-cluster-2\.[^,]+:6379$/);
    expect(env.DISPATCH_METRICS_LISTEN).toBeUndefined();
    expect(objects.find((o) => o.kind === 'HorizontalPodAutoscaler')).toBeUndefined();
    expect(objects.find((o) => o.kind === 'ServiceMonitor')).toBeUndefined();
    expect(deploymentOf(objects).spec.replicas).toBe(3);
    expect(deploymentOf(objects).spec.template.spec.terminationGracePeriodSeconds).toBe(60);
    expect(containerOf(objects).resources).toEqual({ requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '2', memory: '2Gi' } });
    expect(containerOf(objects).image).toMatch(/^registry\.example\.com\/platform\/dispatch@sha256:0{64}$/);
    expect(find(objects, 'PodDisruptionBudget')!.spec).toMatchObject({ minAvailable: 2 });
    expect(find(objects, 'PodDisruptionBudget')!.spec.maxUnavailable).toBeUndefined();
  });

  it('the ConfigMap check bites: the server parser rejects an unknown config key', () => {
    const cm = find(renderObjects([valuesFile('config: {tools: [], tool_timeout: 5}')]), 'ConfigMap')!;
    expect(() => parseConfig(cm.data['config.yaml'], 'config.yaml')).toThrow(/tool_timeout/);
  });

  it('standalone Redis over TLS uses rediss://', () => {
    const env = envOf(renderObjects([valuesFile('redis: {tls: {enabled: true}, standalone: {host: cache.data.svc, db: 2}}')]));
    expect(env.DISPATCH_REDIS_URL).toBe('rediss://cache.data.svc:6379/2');
  });

  it('a single in-memory replica may run without Redis and, when told, without auth', () => {
    const objects = renderObjects([
      valuesFile('redis: {mode: none}\nreplicaCount: 1\nautoscaling: {enabled: false}\nauth: {enabled: false}\nserver: {insecure: true}'),
    ]);
    const env = envOf(objects);
    expect(env.DISPATCH_REDIS_URL).toBeUndefined();
    expect(env.DISPATCH_INSECURE).toBe('1');
    expect(env.DISPATCH_AUTH_TOKENS_FILE).toBeUndefined();
    expect(problems(objects)).toEqual([]);
  });
});

describe('the bundled Redis (redis.deploy.enabled, on by default)', () => {
  let objects: Obj[] = [];
  beforeAll(() => {
    objects = renderObjects([]);
  });

  it('keeps its name short enough for the pods the StatefulSet makes, and takes an image digest with no tag', () => {
    const long = 'a'.repeat(63);
    const rendered = renderObjects([valuesFile(`fullnameOverride: ${long}\nredis:\n  deploy:\n    image:\n      tag: null\n      digest: sha256:${'0'.repeat(64)}\n`)]);
    const set = rendered.find((o) => o.kind === 'StatefulSet')!;
    // The controller labels each pod `controller-revision-hash: <name>-<10 characters>`.
    expect(set.metadata.name).toBe(`${'a'.repeat(46)}-redis`);
    expect(`${set.metadata.name}-0123456789`.length).toBeLessThanOrEqual(63);
    expect(set.spec.template.spec.containers[0].image).toMatch(/@sha256:0{64}$/);
    const env = rendered.find((o) => o.kind === 'Deployment')!.spec.template.spec.containers[0].env as { name: string; value?: string }[];
    expect(env.find((e) => e.name === 'DISPATCH_REDIS_URL')?.value).toBe(`redis://${set.metadata.name}:6379/0`);
  });

  it('is a one-replica StatefulSet with a Service, a redis.conf ConfigMap and a NetworkPolicy, and dispatch points at its Service', () => {
    expect(bundledRedisOf(objects).map((o) => o.kind).sort()).toEqual(['ConfigMap', 'NetworkPolicy', 'Service', 'StatefulSet']);
    const set = redisSetOf(objects);
    const svc = find(objects, 'Service', REDIS)!;
    expect(set.spec).toMatchObject({ replicas: 1, serviceName: REDIS });
    expect(svc.spec.ports).toEqual([{ name: 'redis', port: 6379, targetPort: 'redis', protocol: 'TCP' }]);
    expect(set.spec.template.metadata.labels).toMatchObject(set.spec.selector.matchLabels);
    expect(set.spec.template.metadata.labels).toMatchObject(svc.spec.selector);
    expect(redisContainerOf(objects).ports).toEqual([{ name: 'redis', containerPort: 6379, protocol: 'TCP' }]);
    expect(envOf(objects).DISPATCH_REDIS_URL).toBe(`redis://${REDIS}:6379/0`);
  });

  it('redis.conf keeps every acknowledged write: appendonly yes, appendfsync always, no snapshots, no eviction', () => {
    const directives = directivesOf(redisConfOf(objects));
    expect(directives).toEqual(expect.arrayContaining(['appendonly yes', 'appendfsync always', 'save ""', 'dir /data', 'maxmemory-policy noeviction']));
    expect(directives.filter((d) => /^(appendonly|appendfsync|save|maxmemory-policy) /.test(d))).toHaveLength(4);
    const extra = directivesOf(redisConfOf(renderObjects([valuesFile('redis: {deploy: {extraConfig: "tcp-keepalive 60", maxmemory: ""}}')])));
    expect(extra).toContain('tcp-keepalive 60');
    expect(extra.find((d) => d.startsWith('maxmemory '))).toBeUndefined();
  });

  it('runs a pinned redis:7 image non-root on a read-only root filesystem, /data on a PersistentVolumeClaim', () => {
    const pod = redisSetOf(objects).spec.template.spec;
    const c = redisContainerOf(objects);
    expect(c.image).toMatch(/^redis:7\.\d+\.\d+$/);
    expect(c.args).toEqual(['redis-server', '/etc/redis/redis.conf', '--requirepass', '$(REDIS_PASSWORD)']);
    expect(pod).toMatchObject({ automountServiceAccountToken: false, enableServiceLinks: false });
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 999, fsGroup: 999, seccompProfile: { type: 'RuntimeDefault' } });
    expect(c.securityContext).toMatchObject({
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(c.resources.limits.memory).toBeDefined();
    expect(c.volumeMounts).toEqual([
      { name: 'data', mountPath: '/data' },
      { name: 'config', mountPath: '/etc/redis', readOnly: true },
    ]);
    expect(pod.volumes).toEqual([{ name: 'config', configMap: { name: REDIS } }]);
    const [claim] = redisSetOf(objects).spec.volumeClaimTemplates;
    expect(claim.metadata.name).toBe('data');
    expect(claim.spec).toEqual({ accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '8Gi' } } });
    expect(c.livenessProbe.tcpSocket).toEqual({ port: 'redis' });
    expect(c.readinessProbe.exec.command.join(' ')).toMatch(/redis-cli -h 127\.0\.0\.1 -p 6379 ping\)" = PONG/);
  });

  it('rolls the Redis pod when redis.conf changes', () => {
    const checksum = (o: Obj[]) => redisSetOf(o).spec.template.metadata.annotations['checksum/redis-config'];
    expect(checksum(objects)).toMatch(/^[0-9a-f]{64}$/);
    expect(checksum(renderObjects([]))).toBe(checksum(objects));
    expect(checksum(renderObjects([valuesFile('redis: {deploy: {maxmemory: 1gb}}')]))).not.toBe(checksum(objects));
  });

  it('selects only its own pod: no dispatch Service, PDB or spread constraint selects Redis, its Service no dispatch pod', () => {
    const redisPod = redisSetOf(objects).spec.template.metadata.labels;
    const dispatchPod = deploymentOf(objects).spec.template.metadata.labels;
    const selects = (selector: Record<string, string>, labels: Record<string, string>) => Object.entries(selector).every(([k, v]) => labels[k] === v);
    const selectors = objects.flatMap((o): [string, Record<string, string>][] =>
      o.kind === 'Service' ? [[o.metadata.name, o.spec.selector]] : o.kind === 'PodDisruptionBudget' ? [[o.metadata.name, o.spec.selector.matchLabels]] : [],
    );
    for (const c of deploymentOf(objects).spec.template.spec.topologySpreadConstraints) selectors.push([FULLNAME, c.labelSelector.matchLabels]);
    expect(selectors.length).toBeGreaterThanOrEqual(5);
    for (const [name, selector] of selectors) {
      expect([name, selects(selector, redisPod)]).toEqual([name, name === REDIS]);
      expect([name, selects(selector, dispatchPod)]).toEqual([name, name !== REDIS]);
    }
  });

  it('requires a generated password by default: a kept Secret of 32 random letters and digits, which dispatch is given', () => {
    const secret = find(objects, 'Secret', `${REDIS}-auth`)!;
    expect(secret.metadata.annotations).toEqual({ 'helm.sh/resource-policy': 'keep' });
    expect(secret.metadata.labels).toMatchObject(redisSetOf(objects).metadata.labels);
    const password = Buffer.from(secret.data['redis-password'], 'base64').toString();
    expect(password).toMatch(/^[A-Za-z0-9]{32}$/);
    // helm template (no cluster) draws a new one per render.
    expect(find(renderObjects([]), 'Secret', `${REDIS}-auth`)!.data['redis-password']).not.toBe(secret.data['redis-password']);
    const ref = { secretKeyRef: { name: `${REDIS}-auth`, key: 'redis-password' } };
    expect(redisContainerOf(objects).env).toEqual([
      { name: 'REDIS_PASSWORD', valueFrom: ref },
      { name: 'REDISCLI_AUTH', value: '$(REDIS_PASSWORD)' },
    ]);
    expect(envOf(objects).DISPATCH_REDIS_PASSWORD).toEqual(ref);
  });

  it('keeps the generated password on upgrade: the Secret already in the cluster is read back with lookup', () => {
    const cluster = join(tempDir('cluster-'), 'objects.yaml');
    const before = Buffer.from('the-password-made-at-install').toString('base64');
    writeFileSync(cluster, `apiVersion: v1\nkind: Secret\nmetadata: {name: ${REDIS}-auth, namespace: ${NAMESPACE}}\ndata: {redis-password: ${before}}\n`);
    for (let i = 0; i < 2; i++) expect(find(renderObjects([], cluster), 'Secret', `${REDIS}-auth`)!.data['redis-password']).toBe(before);
    // Another namespace's Secret of that name is not this release's.
    writeFileSync(cluster, `apiVersion: v1\nkind: Secret\nmetadata: {name: ${REDIS}-auth, namespace: elsewhere}\ndata: {redis-password: ${before}}\n`);
    expect(find(renderObjects([], cluster), 'Secret', `${REDIS}-auth`)!.data['redis-password']).not.toBe(before);
  });

  it('generates it on `helm upgrade --reuse-values` from chart 0.2 too, whose values have no generatePassword', () => {
    const upgraded = renderObjects([valuesFile('redis: {deploy: {generatePassword: null}}')]);
    expect(find(upgraded, 'Secret', `${REDIS}-auth`)).toBeDefined();
    expect(redisContainerOf(upgraded).args).toContain('--requirepass');
    expect(envOf(upgraded).DISPATCH_REDIS_PASSWORD).toBeDefined();
  });

  it('quotes the password key, which YAML 1.1 could read as a boolean or a number, and requires one', () => {
    const rendered = renderObjects([valuesFile('redis: {existingSecretPasswordKey: "on"}')]);
    expect(Object.keys(find(rendered, 'Secret', `${REDIS}-auth`)!.data)).toEqual(['on']);
    expect(envOf(rendered).DISPATCH_REDIS_PASSWORD).toEqual({ secretKeyRef: { name: `${REDIS}-auth`, key: 'on' } });
    expect(redisContainerOf(rendered).env[0].valueFrom.secretKeyRef.key).toBe('on');
    expect(problems(rendered)).toEqual([]);
    expect(render([valuesFile('redis: {existingSecretPasswordKey: ""}')]).stderr).toMatch(/redis.existingSecretPasswordKey is required/);
  });

  it.each([
    ['redis.existingSecret', 'redis: {existingSecret: redis-auth}', true],
    ['generatePassword false', 'redis: {deploy: {generatePassword: false}}', false],
    ['an external Redis', 'redis: {standalone: {host: cache.data.svc}}', false],
  ])('generates no Secret with %s', (_label, values, requiresPassword) => {
    const rendered = renderObjects([valuesFile(values)]);
    expect(rendered.filter((o) => o.kind === 'Secret' && o.metadata.name.includes('redis'))).toEqual([]);
    const set = rendered.find((o) => o.kind === 'StatefulSet');
    if (set) expect(set.spec.template.spec.containers[0].args.includes('--requirepass')).toBe(requiresPassword);
    expect(envOf(rendered).DISPATCH_REDIS_PASSWORD !== undefined).toBe(requiresPassword);
  });

  it('with redis.existingSecret, requires the password that dispatch is given (--requirepass from the Secret)', () => {
    const withSecret = renderObjects([valuesFile('redis: {existingSecret: redis-auth, existingSecretPasswordKey: password}')]);
    const ref = { secretKeyRef: { name: 'redis-auth', key: 'password' } };
    const c = redisContainerOf(withSecret);
    expect(c.args).toEqual(['redis-server', '/etc/redis/redis.conf', '--requirepass', '$(REDIS_PASSWORD)']);
    expect(c.env).toEqual([
      { name: 'REDIS_PASSWORD', valueFrom: ref },
      { name: 'REDISCLI_AUTH', value: '$(REDIS_PASSWORD)' },
    ]);
    expect(envOf(withSecret).DISPATCH_REDIS_PASSWORD).toEqual(ref);
    expect(problems(withSecret)).toEqual([]);
  });

  it.each([
    ['a named StorageClass', 'fast-ssd', 'fast-ssd'],
    ['"-" for no dynamic provisioning', '-', ''],
  ])('persistence.storageClass: %s', (_label, storageClass, expected) => {
    const set = redisSetOf(renderObjects([valuesFile(`redis: {deploy: {persistence: {storageClass: "${storageClass}", size: 20Gi}}}`)]));
    expect(set.spec.volumeClaimTemplates[0].spec).toMatchObject({ storageClassName: expected, resources: { requests: { storage: '20Gi' } } });
  });

  it.each([
    ['deploy.enabled false (the URL as before the bundled Redis)', 'redis: {deploy: {enabled: false}}', 'redis://redis-master:6379/0'],
    ['an external standalone.host', 'redis: {standalone: {host: cache.data.svc, port: 6380}}', 'redis://cache.data.svc:6380/0'],
    ['redis.url', 'redis: {url: "redis://elsewhere.data.svc:6379/3"}', 'redis://elsewhere.data.svc:6379/3'],
    ['mode none', 'redis: {mode: none}\nreplicaCount: 1\nautoscaling: {enabled: false}', undefined],
    ['the sentinel value set', join(__dirname, 'values-sentinel-tls.yaml'), expect.stringMatching(/^redis-sentinel:\/\//)],
    ['the cluster value set', join(__dirname, 'values-cluster-nohpa.yaml'), expect.stringMatching(/^redis-cluster:\/\//)],
  ])('is not deployed with %s', (_label, values, url) => {
    const rendered = renderObjects([values.endsWith('.yaml') ? values : valuesFile(values)]);
    expect(bundledRedisOf(rendered)).toEqual([]);
    expect(rendered.filter((o) => o.kind === 'StatefulSet' || o.metadata.name.includes('redis'))).toEqual([]);
    expect(envOf(rendered).DISPATCH_REDIS_URL).toEqual(url);
  });
});

/** Polls `ok` every 50 ms until it holds; throws `message()` after `ms`. */
async function until(ok: () => boolean, ms: number, message: () => string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(message());
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("the bundled Redis's rendered redis.conf, args and probe work with this machine's redis-server", () => {
  it.each([
    ['with the generated password (the default)', '', undefined],
    ['without a password (generatePassword false)', 'redis: {deploy: {generatePassword: false}}', ''],
    ['with redis.existingSecret', 'redis: {existingSecret: redis-auth}', 's3cret pass'],
  ])('%s: it starts, persists with appendonly yes + appendfsync always, and the readiness probe passes', async (_label, values, given) => {
    const objects = renderObjects(values ? [valuesFile(values)] : []);
    // The kubelet reads the generated Secret's value; an existing Secret's is the test's.
    const password = given ?? Buffer.from(find(objects, 'Secret', `${REDIS}-auth`)!.data['redis-password'], 'base64').toString();
    const c = redisContainerOf(objects);
    const dir = tempDir('redis-');
    const confFile = join(dir, 'redis.conf');
    // /data (the PVC) does not exist here, and Redis changes into `dir` as it reads the file.
    const conf = redisConfOf(objects);
    expect(conf).toMatch(/^dir \/data$/m);
    writeFileSync(confFile, conf.replace(/^dir \/data$/m, `dir ${dir}`));
    const port = await freeRedisPort();
    // As the kubelet does: $(REDIS_PASSWORD) expands to the Secret's value; the config file is mounted.
    const expand = (a: string) => (a === '/etc/redis/redis.conf' ? confFile : a.replace('$(REDIS_PASSWORD)', password));
    expect(c.args[0]).toBe('redis-server');
    const args = [...c.args.slice(1).map(expand), '--port', String(port), '--bind', '127.0.0.1', '--daemonize', 'no', '--loglevel', 'warning'];
    let log = '';
    const server = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    server.stdout.on('data', (d: Buffer) => (log += d.toString()));
    server.stderr.on('data', (d: Buffer) => (log += d.toString()));
    const env: NodeJS.ProcessEnv = { ...process.env, REDISCLI_AUTH: password || undefined };
    const probe = c.readinessProbe.exec.command.map((a: string) => a.replace('-p 6379', `-p ${port}`));
    const probeStatus = (probeEnv: NodeJS.ProcessEnv) => spawnSync(probe[0], probe.slice(1), { env: probeEnv, timeout: 5000 }).status;
    const cli = (...a: string[]) => spawnSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...a], { env, encoding: 'utf8', timeout: 5000 }).stdout;
    try {
      await until(() => probeStatus(env) === 0, 10_000, () => `the readiness probe never passed; redis-server (exit ${server.exitCode}) said:\n${log}`);
      expect(cli('CONFIG', 'GET', 'appendonly')).toBe('appendonly\nyes\n');
      expect(cli('CONFIG', 'GET', 'appendfsync')).toBe('appendfsync\nalways\n');
      expect(cli('CONFIG', 'GET', 'save')).toBe('save\n\n');
      expect(cli('CONFIG', 'GET', 'maxmemory-policy')).toBe('maxmemory-policy\nnoeviction\n');
      expect(cli('SET', 'k', 'v')).toBe('OK\n');
      expect(readdirSync(dir)).toContain('appendonlydir');
      if (password) {
        expect(probeStatus({ ...env, REDISCLI_AUTH: undefined })).not.toBe(0);
        expect(probeStatus({ ...env, REDISCLI_AUTH: 'wrong' })).not.toBe(0);
      }
    } finally {
      await new Promise<void>((resolve) => {
        if (server.exitCode !== null || server.signalCode !== null) return resolve();
        server.once('exit', () => resolve());
        server.kill('SIGKILL');
      });
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});

describe('the checksum annotation rolls pods when the config changes', () => {
  it('is stable for the same config and changes with it', () => {
    const a = checksumOf(renderObjects([]));
    expect(checksumOf(renderObjects([]))).toBe(a);
    const changed = checksumOf(renderObjects([valuesFile('config: {tools: [{name: echo, builtin: {name: echo}}]}')]));
    expect(changed).toMatch(/^[0-9a-f]{64}$/);
    expect(changed).not.toBe(a);
  });
});

describe('the chart refuses unsafe or inconsistent values', () => {
  it.each([
    ['in-memory state with several replicas', 'redis: {mode: none}', /redis.mode none/],
    ['an unknown Redis mode', 'redis: {mode: replicated}', /redis.mode must be/],
    ['sentinel without hosts', 'redis: {mode: sentinel}', /redis.sentinel.hosts/],
    ['Redis TLS without a Redis (mode none)', 'redis: {mode: none, tls: {enabled: true}}\nreplicaCount: 1\nautoscaling: {enabled: false}', /redis.mode none connects to no Redis/],
    ['a Redis client certificate without its Secret', 'redis: {mode: cluster, cluster: {nodes: ["a:6379"]}, tls: {enabled: true, clientCertificate: true}}', /redis.tls.clientCertificate needs redis.tls.existingSecret/],
    ['Redis TLS to the bundled Redis', 'redis: {tls: {enabled: true}}', /the bundled one \(redis.deploy.enabled\) serves no TLS/],
    ['a bundled Redis image without tag or digest', 'redis: {deploy: {image: {tag: ""}}}', /redis.deploy.image.tag or redis.deploy.image.digest is required/],
    ['no auth and not insecure', 'auth: {enabled: false}', /without authentication/],
    ['TLS without a Secret', 'tls: {enabled: true}', /tls.existingSecret is required/],
    ['a grace period shorter than preStop + drain + closing', 'shutdown: {terminationGracePeriodSeconds: 15}', /must be at least/],
    ['a ServiceMonitor without metrics', 'metrics: {enabled: false, serviceMonitor: {enabled: true}}', /needs metrics.enabled/],
  ])('fails the render for %s', (_label, values, message) => {
    const r = render([valuesFile(values)]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(message);
  });
});

describe('the check cannot pass silently', () => {
  const brokenChart = (template: string, text: string) => {
    const copy = join(tempDir('chart-'), 'dispatch');
    cpSync(CHART, copy, { recursive: true });
    appendFileSync(join(copy, 'templates', template), text);
    return copy;
  };

  it.each([
    ['an unknown function', 'service.yaml', '\n# {{ .Values.replicaCount | nosuchfunction }}\n', /function "nosuchfunction" not defined/],
    ['an unclosed action', 'configmap.yaml', '\n{{ if .Values.config }}\n', /unexpected EOF/],
    ['a missing include', 'service.yaml', '\n# {{ include "dispatch.nosuchtemplate" . }}\n', /no template "dispatch.nosuchtemplate"/],
    ['output that is not YAML', 'configmap.yaml', '\n  bad: [indentation\n', /YAML parse error on dispatch\/templates\/configmap.yaml/],
  ])('a template with %s fails the render', (_label, template, text, message) => {
    const r = render([], brokenChart(template, text));
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(message);
  });

  it('an object the API server would reject fails validation (replicas: "two")', () => {
    // values.schema.json refuses `replicaCount: two` before rendering, so the object is mistyped here.
    expect(render([valuesFile('replicaCount: two')]).stderr).toContain('- replicaCount: Invalid type. Expected: integer, given: string');
    const objects = renderObjects([valuesFile('autoscaling: {enabled: false}')]);
    deploymentOf(objects).spec.replicas = 'two';
    expect(problems(objects)).toEqual([expect.stringMatching(/Deployment prod-dispatch: .*replicas must be integer/)]);
  });

  it('a mistyped Service, ServiceMonitor or unknown kind fails validation too', () => {
    const objects = renderObjects([join(__dirname, 'values-sentinel-tls.yaml')]);
    const svc = structuredClone(find(objects, 'Service')!);
    svc.spec.ports[0].port = 'fifty';
    const sm = structuredClone(find(objects, 'ServiceMonitor')!);
    sm.spec.endpoints[0].interval = 15;
    const unknown = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } };
    const found = problems([svc, sm, unknown]);
    expect(found).toHaveLength(3);
    expect(found[0]).toMatch(/^Service .*port/);
    expect(found[1]).toMatch(/^ServiceMonitor .*interval/);
    expect(found[2]).toMatch(/^Widget w: /);
  });
});

describe('helm-render merges values like Helm', () => {
  it('deep-merges -f files in order, and null deletes a key', () => {
    const first = valuesFile('resources: {limits: {cpu: "3"}}\npodLabels: {team: a}');
    const second = valuesFile('resources: {limits: null}\npodLabels: {tier: b}');
    const objects = renderObjects([first, second]);
    expect(containerOf(objects).resources).toEqual({ requests: { cpu: '250m', memory: '256Mi' } });
    expect(deploymentOf(objects).spec.template.metadata.labels).toMatchObject({ team: 'a', tier: 'b' });
  });
});

describe('chart hygiene', () => {
  it('documents every value in values.yaml with a `# --` comment on it or an enclosing key', () => {
    const doc = parseDocument(readFileSync(join(CHART, 'values.yaml'), 'utf8'));
    const marked = (comment?: string | null) => /^ ?-- /m.test(comment ?? '');
    const undocumented: string[] = [];
    const walk = (map: YAMLMap, path: string, inherited: boolean) =>
      map.items.forEach((pair, i) => {
        const key = `${path}${String((pair.key as { value: unknown }).value)}`;
        const own = marked((pair.key as { commentBefore?: string }).commentBefore) || (i === 0 && marked(map.commentBefore));
        if (isMap(pair.value) && pair.value.items.length) walk(pair.value, `${key}.`, own || inherited);
        else if (!own && !inherited) undocumented.push(key);
      });
    walk(doc.contents as YAMLMap, '', false);
    expect(undocumented).toEqual([]);
  });

  it('NOTES.txt renders', () => {
    const notes = renderNotes([join(__dirname, 'values-sentinel-tls.yaml')]);
    expect(notes).toContain(`dns:///${FULLNAME}-headless.${NAMESPACE}.svc:50051`);
    expect(notes).toContain('secret generic dispatch-tokens');
    expect(notes).not.toContain('the chart\'s own');
    // With the defaults, the notes name the bundled Redis.
    expect(renderNotes([])).toContain(`Redis: the chart's own, ${FULLNAME}-redis (append-only file fsynced`);
  });
});
