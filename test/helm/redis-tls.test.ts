// redis.tls: TLS to Redis in every mode the server speaks it (rediss://, rediss-sentinel://,
// rediss-cluster://, commit 1718b6d), with the PEM files of redis.tls.existingSecret mounted and
// named by DISPATCH_REDIS_TLS_CA (and _CERT / _KEY with redis.tls.clientCertificate). Before, the
// chart refused redis.tls.enabled outside standalone mode and had no way to give dispatchd a
// private CA or a client certificate. The values dispatchd would refuse at start (the TLS files
// with a URL that does not ask for TLS: exit 2), or that cannot work, are refused at render time.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDaemonOptions } from '../../src/cli/dispatchd-options';
import { REDIS_TLS_VARIABLES, redisTlsProblem } from '../../src/store/redis/redis-tls';
import { parseRedisUrl } from '../../src/store/redis/redis-url';
import { bundledRedisOf, containerOf, deploymentOf, envOf, problems, render, renderObjects, useRenderer, valuesFile, type Obj } from './render-chart';

useRenderer({ reuseBuild: true });

const MOUNT = '/etc/dispatch/redis-tls';
const STANDALONE = 'mode: standalone, standalone: {host: cache.data.svc, port: 6380, db: 2}';
const SENTINEL = 'mode: sentinel, sentinel: {hosts: ["s-0.data.svc:26379", "s-1.data.svc:26379"], masterName: mymaster}';
const CLUSTER = 'mode: cluster, cluster: {nodes: ["c-0.data.svc:6379", "c-1.data.svc:6379"]}';

const redisValues = (mode: string, tls: string) => valuesFile(`redis: {${mode}, tls: {${tls}}}`);
const volumeOf = (objects: Obj[]) => deploymentOf(objects).spec.template.spec.volumes.find((v: { name: string }) => v.name === 'redis-tls');
const mountOf = (objects: Obj[]) => containerOf(objects).volumeMounts.find((m: { name: string }) => m.name === 'redis-tls');
const tlsNames = (objects: Obj[]) => Object.keys(envOf(objects)).filter((n) => n.startsWith('DISPATCH_REDIS_TLS_'));

/** The container's env as plain strings, as dispatchd sees it (a Secret reference as a placeholder). */
function podEnv(objects: Obj[]): Record<string, string> {
  return Object.fromEntries(
    (containerOf(objects).env as { name: string; value?: string }[]).map((e) => [e.name, e.value ?? (e.name.startsWith('POD_') ? 'pod' : 'secret-value')]),
  );
}

describe.each([
  ['standalone', STANDALONE, 'rediss://cache.data.svc:6380/2'],
  ['sentinel', SENTINEL, 'rediss-sentinel://s-0.data.svc:26379,s-1.data.svc:26379/mymaster'],
  ['cluster', CLUSTER, 'rediss-cluster://c-0.data.svc:6379,c-1.data.svc:6379'],
])('redis.mode %s over TLS', (modeName, mode, url) => {
  it('builds the TLS URL, and the plain one without redis.tls.enabled', () => {
    expect(envOf(renderObjects([redisValues(mode, 'enabled: true')])).DISPATCH_REDIS_URL).toBe(url);
    expect(envOf(renderObjects([redisValues(mode, 'enabled: false')])).DISPATCH_REDIS_URL).toBe(url.replace(/^rediss/, 'redis'));
  });

  it('without a Secret: the public CAs only, nothing mounted, no DISPATCH_REDIS_TLS_*', () => {
    const objects = renderObjects([redisValues(mode, 'enabled: true')]);
    expect(tlsNames(objects)).toEqual([]);
    expect(volumeOf(objects)).toBeUndefined();
    expect(mountOf(objects)).toBeUndefined();
    expect(problems(objects)).toEqual([]);
  });

  it("with a Secret: mounted read-only (0440, whole, so it is renewed in place), its ca.crt as DISPATCH_REDIS_TLS_CA", () => {
    const objects = renderObjects([redisValues(mode, 'enabled: true, existingSecret: redis-ca')]);
    expect(volumeOf(objects)).toEqual({ name: 'redis-tls', secret: { secretName: 'redis-ca', defaultMode: 0o440 } });
    expect(mountOf(objects)).toEqual({ name: 'redis-tls', mountPath: MOUNT, readOnly: true });
    expect(mountOf(objects).subPath).toBeUndefined();
    const env = envOf(objects);
    expect(env.DISPATCH_REDIS_URL).toBe(url);
    expect(env.DISPATCH_REDIS_TLS_CA).toBe(`${MOUNT}/ca.crt`);
    expect(tlsNames(objects)).toEqual(['DISPATCH_REDIS_TLS_CA']);
    expect(problems(objects)).toEqual([]);
  });

  it('with a client certificate: also its tls.crt and tls.key as DISPATCH_REDIS_TLS_CERT and _KEY', () => {
    const objects = renderObjects([redisValues(mode, 'enabled: true, existingSecret: redis-client, clientCertificate: true')]);
    expect(volumeOf(objects).secret.secretName).toBe('redis-client');
    expect(envOf(objects)).toMatchObject({
      DISPATCH_REDIS_URL: url,
      DISPATCH_REDIS_TLS_CA: `${MOUNT}/ca.crt`,
      DISPATCH_REDIS_TLS_CERT: `${MOUNT}/tls.crt`,
      DISPATCH_REDIS_TLS_KEY: `${MOUNT}/tls.key`,
    });
    expect(problems(objects)).toEqual([]);
  });

  it('with caCertificate false: the client certificate alone, the public CAs only, and dispatchd needs no ca.crt in the mount', () => {
    const objects = renderObjects([redisValues(mode, 'enabled: true, existingSecret: redis-client, clientCertificate: true, caCertificate: false')]);
    expect(volumeOf(objects).secret.secretName).toBe('redis-client');
    expect(tlsNames(objects)).toEqual(['DISPATCH_REDIS_TLS_CERT', 'DISPATCH_REDIS_TLS_KEY']);
    expect(problems(objects)).toEqual([]);
    const env = podEnv(objects);
    const dir = mkdtempSync(join(tmpdir(), 'dispatch-redis-tls-'));
    try {
      for (const file of ['tls.crt', 'tls.key']) writeFileSync(join(dir, file), `test ${file}\n`);
      const local = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v.startsWith(`${MOUNT}/`) ? join(dir, v.slice(MOUNT.length + 1)) : v]));
      expect(() => parseDaemonOptions(containerOf(objects).args ?? [], local)).not.toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each([
    ['true', 'caCertificate: true'],
    ['unset (values of a chart without the key, kept by `helm upgrade --reuse-values`)', 'caCertificate: null'],
  ])('with caCertificate %s: the ca.crt is trusted', (_label, value) => {
    const objects = renderObjects([redisValues(mode, `enabled: true, existingSecret: redis-ca, ${value}`)]);
    expect(tlsNames(objects)).toEqual(['DISPATCH_REDIS_TLS_CA']);
  });

  it("is what dispatchd accepts: a TLS URL of this mode, and its option parser reads every file from the mount", () => {
    const objects = renderObjects([redisValues(mode, 'enabled: true, existingSecret: redis-client, clientCertificate: true')]);
    const env = podEnv(objects);
    expect(redisTlsProblem(true, env)).toBeUndefined();
    expect(parseRedisUrl(env.DISPATCH_REDIS_URL!, env)).toMatchObject({ mode: modeName, tls: true });
    // The mount's files, at a directory of this machine: the parser reads each one (a missing one stops dispatchd).
    const dir = mkdtempSync(join(tmpdir(), 'dispatch-redis-tls-'));
    try {
      for (const file of ['ca.crt', 'tls.crt', 'tls.key']) writeFileSync(join(dir, file), `test ${file}\n`);
      const local = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v.startsWith(`${MOUNT}/`) ? join(dir, v.slice(MOUNT.length + 1)) : v]));
      expect(() => parseDaemonOptions(containerOf(objects).args ?? [], local)).not.toThrow();
      rmSync(join(dir, 'tls.key'));
      expect(() => parseDaemonOptions(containerOf(objects).args ?? [], local)).toThrow(/DISPATCH_REDIS_TLS_KEY: cannot read/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('redis.tls with the rest of the chart', () => {
  it('Sentinel over TLS keeps the Sentinels\' own credentials and the password from their Secrets', () => {
    const objects = renderObjects([
      valuesFile(`redis: {${SENTINEL.replace('masterName: mymaster}', 'masterName: mymaster, auth: {useRedisPassword: true}}')}, existingSecret: redis-auth, tls: {enabled: true, existingSecret: redis-ca}}`),
    ]);
    const env = envOf(objects);
    const ref = { secretKeyRef: { name: 'redis-auth', key: 'redis-password' } };
    expect(env).toMatchObject({ DISPATCH_REDIS_PASSWORD: ref, DISPATCH_REDIS_SENTINEL_PASSWORD: ref, DISPATCH_REDIS_TLS_CA: `${MOUNT}/ca.crt` });
    expect(env.DISPATCH_REDIS_URL).toMatch(/^rediss-sentinel:\/\//);
    expect(problems(objects)).toEqual([]);
  });

  it("beside the server's own TLS: two Secrets, two mounts", () => {
    const objects = renderObjects([
      valuesFile(`tls: {enabled: true, existingSecret: dispatch-tls, mutual: true}\nredis: {${CLUSTER}, tls: {enabled: true, existingSecret: redis-client, clientCertificate: true}}`),
    ]);
    const mounts = containerOf(objects).volumeMounts.map((m: { name: string; mountPath: string }) => [m.name, m.mountPath]);
    expect(mounts).toEqual(expect.arrayContaining([['tls', '/etc/dispatch/tls'], ['redis-tls', MOUNT]]));
    const env = envOf(objects);
    expect(env).toMatchObject({ DISPATCH_TLS_CA: '/etc/dispatch/tls/ca.crt', DISPATCH_REDIS_TLS_CA: `${MOUNT}/ca.crt`, DISPATCH_REDIS_TLS_CERT: `${MOUNT}/tls.crt` });
    expect(problems(objects)).toEqual([]);
  });

  it.each([
    ['rediss-cluster://', 'rediss-cluster://c-0.data.svc:6379,c-1.data.svc:6379', 'cluster'],
    ['rediss-sentinel://', 'rediss-sentinel://s-0.data.svc:26379/mymaster', 'sentinel'],
    ['REDISS:// (any case)', 'REDISS://cache.data.svc:6379/0', 'standalone'],
  ])('redis.url %s is used as given, with the Secret\'s files', (_label, url, mode) => {
    const objects = renderObjects([valuesFile(`redis: {mode: ${mode}, url: "${url}", tls: {enabled: true, existingSecret: redis-ca}}`)]);
    const env = envOf(objects);
    expect(env.DISPATCH_REDIS_URL).toBe(url);
    expect(env.DISPATCH_REDIS_TLS_CA).toBe(`${MOUNT}/ca.crt`);
    expect(bundledRedisOf(objects)).toEqual([]);
  });

  it.each([
    ['by default', ''],
    ['with `helm upgrade --reuse-values` from a chart without the new keys', 'redis: {tls: {enabled: false}}'],
    ['with redis.tls removed', 'redis: {tls: null}'],
  ])('sets nothing %s: the bundled Redis in plain TCP', (_label, values) => {
    const objects = renderObjects([valuesFile(values)]);
    expect(envOf(objects).DISPATCH_REDIS_URL).toMatch(/^redis:\/\/prod-dispatch-redis:6379\/0$/);
    expect(tlsNames(objects)).toEqual([]);
    expect(volumeOf(objects)).toBeUndefined();
  });
});

describe('refused at render time', () => {
  it.each([
    [
      'a Secret without redis.tls.enabled (dispatchd would stop at start: the files with a plain URL)',
      `redis: {${SENTINEL}, tls: {existingSecret: redis-ca}}`,
      'redis.tls.existingSecret is set but redis.tls.enabled is false',
    ],
    [
      'a client certificate without the Secret that holds it',
      `redis: {${CLUSTER}, tls: {enabled: true, clientCertificate: true}}`,
      'redis.tls.clientCertificate needs redis.tls.existingSecret',
    ],
    [
      'a client certificate with neither',
      `redis: {${CLUSTER}, tls: {clientCertificate: true}}`,
      'redis.tls.clientCertificate needs redis.tls.existingSecret',
    ],
    [
      'a Secret of which nothing would be used: its CA not trusted, no client certificate',
      `redis: {${STANDALONE}, tls: {enabled: true, existingSecret: redis-client, caCertificate: false}}`,
      'redis.tls.existingSecret is set, but neither its ca.crt (redis.tls.caCertificate is false) nor a client certificate (redis.tls.clientCertificate) is used',
    ],
    [
      'TLS to the bundled Redis, which serves none',
      'redis: {tls: {enabled: true, existingSecret: redis-ca}}',
      'redis.tls.enabled needs an external Redis: the bundled one (redis.deploy.enabled) serves no TLS',
    ],
    [
      'TLS with redis.mode none',
      'redis: {mode: none, tls: {enabled: true}}\nreplicaCount: 1\nautoscaling: {enabled: false}',
      'redis.tls.enabled is set, but redis.mode none connects to no Redis',
    ],
    [
      'TLS with a redis.url that does not ask for it',
      'redis: {mode: cluster, url: "redis-cluster://c-0.data.svc:6379", tls: {enabled: true, existingSecret: redis-ca}}',
      'redis.tls.enabled asks for TLS, but redis.url does not: start it with rediss://, rediss-sentinel:// or rediss-cluster://',
    ],
  ])('%s', (_label, values, message) => {
    const r = render([valuesFile(values)]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(message);
  });

  it.each(Object.values(REDIS_TLS_VARIABLES))('an extraEnv %s, with the defaults and with the Secret mounted', (name) => {
    for (const values of ['', `redis: {${CLUSTER}, tls: {enabled: true, existingSecret: redis-client, clientCertificate: true}}`]) {
      const r = render([valuesFile(`${values}\nextraEnv: [{name: ${name}, value: /elsewhere.pem}]`)]);
      expect(r.status).not.toBe(0);
      expect(r.stderr).toContain(`extraEnv must not set ${name}: the chart sets it from redis.tls.`);
    }
  });

  it.each([
    ['a string for clientCertificate', 'redis: {tls: {clientCertificate: "yes"}}', '- redis.tls.clientCertificate: Invalid type. Expected: boolean, given: string'],
    ['a string for caCertificate', 'redis: {tls: {caCertificate: "no"}}', '- redis.tls.caCertificate: Invalid type. Expected: boolean, given: string'],
    ['a misspelt key', 'redis: {tls: {existingSecert: redis-ca}}', '- redis.tls: Additional property existingSecert is not allowed'],
  ])('by the schema: %s', (_label, values, line) => {
    const r = render([valuesFile(values)]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(line);
  });
});
