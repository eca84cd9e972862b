// Redis over TLS: before, only a standalone rediss:// URL asked for TLS, with Node's own CAs and
// no client certificate: a Redis of a private CA, one asking clients for a certificate (Redis's
// default, tls-auth-clients yes), and every TLS Sentinel or Cluster (AWS ElastiCache's or
// MemoryDB's with in-transit encryption, Azure's) could not be reached. Now rediss-sentinel:// and
// rediss-cluster:// ask for TLS too, and DISPATCH_REDIS_TLS_CA, _CERT and _KEY name the PEM files.
// Real TLS redis-servers (standalone, Sentinel, and a cluster of three through dispatchd, with a
// side-effecting call replayed), and a test CA made with openssl.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDispatchClient } from '../../src/client';
import { createRedisStore, parseRedisUrl } from '../../src/store/redis';
import { redisTlsOptions } from '../../src/store/redis/redis-tls';
import { runDaemon, startDaemon, type Daemon } from '../helpers/daemon';
import { redisReacher, tlsPortOf } from '../helpers/redis-tls';
import { startRedis, startRedisCluster, startSentinel, type TestRedis, type TestRedisCluster, type TestSentinel } from '../helpers/redis-server';
import { createTestPki, type TestPki } from '../security/support/certificates';

jest.setTimeout(60_000);

let pki: TestPki;
let env: NodeJS.ProcessEnv;
const reaches = redisReacher();
beforeAll(() => {
  pki = createTestPki('redis test CA');
  const client = pki.client('redis-client', '/CN=dispatch');
  env = { DISPATCH_REDIS_TLS_CA: pki.ca, DISPATCH_REDIS_TLS_CERT: client.cert, DISPATCH_REDIS_TLS_KEY: client.key };
});
afterAll(() => pki?.remove());

describe('URLs and files', () => {
  test('rediss-sentinel:// and rediss-cluster:// ask for TLS; redis-sentinel:// and redis-cluster:// do not', () => {
    expect(parseRedisUrl('rediss-cluster://a:6379,b:6380', {})).toMatchObject({ mode: 'cluster', tls: true });
    expect(parseRedisUrl('redis-cluster://a:6379', {})).toMatchObject({ mode: 'cluster', tls: false });
    expect(parseRedisUrl('rediss-sentinel://s1,s2:26380/mymaster', {})).toMatchObject({ mode: 'sentinel', tls: true, name: 'mymaster', sentinels: [{ host: 's1', port: 26379 }, { host: 's2', port: 26380 }] });
    expect(parseRedisUrl('redis-sentinel://s1/mymaster', {})).toMatchObject({ mode: 'sentinel', tls: false });
  });

  test('TLS files with a URL that does not ask for TLS, or a certificate without its key, are refused naming the variables', () => {
    expect(() => parseRedisUrl('redis://h:6379', { DISPATCH_REDIS_TLS_CA: '/ca.pem' })).toThrow('DISPATCH_REDIS_TLS_CA is set, but the URL does not ask for TLS (use rediss://, rediss-sentinel:// or rediss-cluster://)');
    expect(() => parseRedisUrl('redis-cluster://h:6379', { DISPATCH_REDIS_TLS_CERT: '/c', DISPATCH_REDIS_TLS_KEY: '/k' })).toThrow('DISPATCH_REDIS_TLS_CERT and DISPATCH_REDIS_TLS_KEY are set, but the URL');
    expect(() => parseRedisUrl('rediss://h:6379', { DISPATCH_REDIS_TLS_CERT: '/c' })).toThrow('DISPATCH_REDIS_TLS_CERT and DISPATCH_REDIS_TLS_KEY go together');
    // An empty variable counts as unset.
    expect(parseRedisUrl('redis://h:6379', { DISPATCH_REDIS_TLS_CA: '' })).toMatchObject({ tls: false });
  });

  test('a file that cannot be read stops dispatchd at start, naming its variable', async () => {
    expect(() => redisTlsOptions({ DISPATCH_REDIS_TLS_CA: '/nonexistent/ca.pem' })).toThrow('DISPATCH_REDIS_TLS_CA: cannot read /nonexistent/ca.pem: ENOENT');
    const { code, stderr } = await runDaemon(['--listen', '127.0.0.1:0', '--redis', 'rediss-cluster://127.0.0.1:1'], { DISPATCH_REDIS_TLS_CA: '/nonexistent/ca.pem' });
    expect(code).toBe(2);
    expect(stderr).toContain('DISPATCH_REDIS_TLS_CA: cannot read /nonexistent/ca.pem: ENOENT');
  });

  test("the CA is trusted beside Node's own, and a server name is checked for a host name, not an IP address", () => {
    const options = redisTlsOptions({ DISPATCH_REDIS_TLS_CA: pki.ca }, 'redis.internal');
    expect(options.servername).toBe('redis.internal');
    expect((options.ca as unknown[]).length).toBeGreaterThan(100);
    expect(redisTlsOptions({}, '127.0.0.1')).toEqual({});
  });
});

describe('standalone, asking clients for a certificate', () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startRedis({ own: true, tls: { cert: pki.serverCert, key: pki.serverKey, ca: pki.ca, authClients: true } });
  });
  afterAll(() => redis?.close());

  test('reached with the CA and a client certificate; not without the certificate, nor without the CA (the server is verified)', async () => {
    const client = await reaches(redis.tlsUrl!, env);
    expect(client).toBeDefined();
    expect(await client!.set('k', 'v')).toBe('OK');
    expect(await reaches(redis.tlsUrl!, { DISPATCH_REDIS_TLS_CA: pki.ca }, 500)).toBeUndefined();
    expect(await reaches(redis.tlsUrl!, { DISPATCH_REDIS_TLS_CERT: env.DISPATCH_REDIS_TLS_CERT, DISPATCH_REDIS_TLS_KEY: env.DISPATCH_REDIS_TLS_KEY }, 500)).toBeUndefined();
  });
});

describe('Sentinel over TLS', () => {
  let master: TestRedis;
  let sentinel: TestSentinel;
  beforeAll(async () => {
    const tls = { cert: pki.serverCert, key: pki.serverKey, ca: pki.ca };
    master = await startRedis({ own: true, tls });
    sentinel = await startSentinel(master.tlsPort!, 'tlsmaster', { tls });
  });
  afterAll(async () => {
    await sentinel?.close();
    await master?.close();
  });

  test('the master is found through the Sentinel over TLS and reached over TLS; the store claims and replays on it', async () => {
    const url = `rediss-sentinel://127.0.0.1:${sentinel.tlsPort}/tlsmaster`;
    const client = await reaches(url, env, 10_000);
    expect(client).toBeDefined();
    const store = createRedisStore(client!);
    const scope = { tenant: 't', sessionId: `s-${Date.now()}` };
    const result = { output: 'sent', isError: false, resolvedToolName: 'send', truncated: false, resultHandle: '', durationMs: 1 };
    await store.beginAttempt({ scope, op: 'o', claim: { key: 'k', leaseMs: 10_000 } });
    await store.finishAttempt({ scope, op: 'o', idempotency: { key: 'k', action: 'complete', result, ttlSeconds: 60 } });
    const again = await store.beginAttempt({ scope, op: 'o', claim: { key: 'k', leaseMs: 10_000 } });
    expect(again.claim).toMatchObject({ state: 'completed', result: { output: 'sent' } });
    // Written on the master, through its TLS port.
    expect(master.cli('DBSIZE').trim()).not.toBe('0');
    await store.close();
  });
});

describe('a cluster of three masters over TLS, through dispatchd', () => {
  let cluster: TestRedisCluster;
  let daemon: Daemon | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'redis-tls-'));
  let sends = 0;
  const tools = createServer((_req, res) => res.end(`sent ${++sends}`));
  beforeAll(async () => {
    // Each node's certificate serves its cluster bus's connections too, which Redis authenticates.
    const node = pki.peer('redis-node');
    cluster = await startRedisCluster(3, 0, { tls: { cert: node.cert, key: node.key, ca: pki.ca } });
    await new Promise<void>((resolve) => tools.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    if (daemon && daemon.child.exitCode === null) {
      daemon.child.kill('SIGTERM');
      await daemon.exited;
    }
    tools.close();
    await cluster?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a side-effecting call runs once and is replayed, its records on the cluster, reached only over TLS', async () => {
    const config = join(dir, 'tools.yaml');
    writeFileSync(config, `tools:\n  - { name: send, effect: side_effect, input_schema: '{"type":"object"}', http: { url: "http://127.0.0.1:${(tools.address() as AddressInfo).port}/send" } }\n`);
    daemon = await startDaemon(['--redis', cluster.tlsUrl!, '--config', config], env);
    const client = createDispatchClient(`127.0.0.1:${daemon.port}`);
    try {
      const call = (id: string) => client.dispatch({ sessionId: 'tls', calls: [{ id, name: 'send', arguments: '{"to":"a"}' }] }).then((r) => r.results[0]!);
      expect(await call('c1')).toMatchObject({ isError: false, output: 'sent 1', idempotentReplay: false });
      expect(await call('c2')).toMatchObject({ isError: false, output: 'sent 1', idempotentReplay: true });
      expect(sends).toBe(1);
      const keys = cluster.ports.map((port) => Number(cluster.cli(port, 'DBSIZE').trim()));
      expect(keys.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
      // Every connection of dispatchd's (store, subscriptions, publishers) came to a node's TLS port.
      const ports = cluster.ports.flatMap((port) =>
        cluster
          .cli(port, 'CLIENT', 'LIST')
          .split('\n')
          .filter((line) => / name=dispatch:/.test(line))
          .map((line) => [port, Number(/ laddr=127\.0\.0\.1:(\d+)/.exec(line)?.[1])]),
      );
      expect(ports.length).toBeGreaterThanOrEqual(6);
      for (const [port, local] of ports) expect(local).toBe(tlsPortOf(port!));
    } finally {
      client.close();
    }
  });
});
