// Redis over TLS checks the server's certificate against the name the connection was made to: a
// managed Redis's certificates name hosts, never IP addresses (ElastiCache's and MemoryDB's cluster
// nodes are announced by name, and only that name is in their certificates). redis-tls.test.ts
// reaches servers whose certificates hold 127.0.0.1 too; here they hold `localhost` alone. A
// standalone reached by its name, refused at its address and refused under another name; and a
// cluster of three TLS masters announced by host name (`cluster-preferred-endpoint-type
// hostname`), which the store must reach at each node's name, not at the address it resolves to.
import { connect, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { connectRedis, createRedisStore, type RedisClient } from '../../src/store/redis';
import { redisReacher, tlsPortOf } from '../helpers/redis-tls';
import { startRedis, startRedisCluster, type TestRedis, type TestRedisCluster } from '../helpers/redis-server';
import { createTestPki, type TestPki } from '../security/support/certificates';

jest.setTimeout(60_000);

let pki: TestPki;
let env: NodeJS.ProcessEnv;
const reachWith = redisReacher();
/** `url` reached with this file's CA within `ms`: the client, else undefined. */
const reaches = (url: string, ms?: number) => reachWith(url, env, ms);
beforeAll(() => {
  pki = createTestPki('redis names CA');
  env = { DISPATCH_REDIS_TLS_CA: pki.ca };
});
afterAll(() => pki?.remove());

describe('a standalone whose certificate names localhost alone', () => {
  let redis: TestRedis;
  let elsewhere: TestRedis;
  beforeAll(async () => {
    const named = pki.peer('named', 'DNS:localhost');
    const other = pki.peer('other', 'DNS:redis.internal');
    [redis, elsewhere] = await Promise.all([
      startRedis({ own: true, tls: { cert: named.cert, key: named.key, ca: pki.ca } }),
      startRedis({ own: true, tls: { cert: other.cert, key: other.key, ca: pki.ca } }),
    ]);
  });
  afterAll(async () => {
    await redis?.close();
    await elsewhere?.close();
  });

  test('is reached by that name; not at its IP address, which the certificate does not hold', async () => {
    const client = await reaches(`rediss://localhost:${redis.tlsPort}`);
    expect(client).toBeDefined();
    expect(await client!.set('k', 'v')).toBe('OK');
    expect(await reaches(`rediss://127.0.0.1:${redis.tlsPort}`, 500)).toBeUndefined();
  });

  test('a certificate of the same CA for another name is refused', async () => {
    expect(await reaches(`rediss://localhost:${elsewhere.tlsPort}`, 500)).toBeUndefined();
  });

  test('a connection ended during its handshake with that server does not crash the process', async () => {
    // ioredis listened to the first error of a socket only; ended before its handshake, the socket
    // then failed the name check and got the server's alert too: an uncaught exception (which
    // fails this test). A proxy holds the handshake until the client has been told to disconnect.
    let client: RedisClient | undefined;
    const sockets: Socket[] = [];
    const proxy = createServer({ allowHalfOpen: true }, (socket) => {
      client!.disconnect();
      const upstream = connect(elsewhere.tlsPort!, '127.0.0.1');
      sockets.push(socket, upstream);
      for (const s of [socket, upstream]) s.on('error', () => undefined);
      socket.pipe(upstream).pipe(socket);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      client = connectRedis(`rediss://localhost:${(proxy.address() as AddressInfo).port}`, { env });
      const errors: string[] = [];
      client.on('error', (error: NodeJS.ErrnoException) => errors.push(error.code ?? error.message));
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('the client did not end in 5 s')), 5_000);
        client!.once('end', () => (clearTimeout(timer), resolve()));
      });
      // The alert comes after the name check's error: time for it to arrive.
      await new Promise((r) => setTimeout(r, 300));
      expect(errors).toContain('ERR_TLS_CERT_ALTNAME_INVALID');
    } finally {
      for (const s of sockets) s.destroy();
      proxy.close();
    }
  });
});

describe('a cluster of three TLS masters announced by host name', () => {
  let cluster: TestRedisCluster;
  beforeAll(async () => {
    const node = pki.peer('node', 'DNS:localhost');
    cluster = await startRedisCluster(3, 0, {
      tls: { cert: node.cert, key: node.key, ca: pki.ca },
      extraArgs: ['--cluster-announce-hostname', 'localhost', '--cluster-preferred-endpoint-type', 'hostname'],
    });
  });
  afterAll(() => cluster?.close());

  test('the nodes are announced as localhost, and the store claims and replays on every master', async () => {
    const slots = cluster.cli(cluster.ports[0]!, 'CLUSTER', 'SLOTS');
    // Each slot range's endpoint is the name (its address follows only as metadata).
    expect(slots.split('\n').filter((line) => line === 'localhost')).toHaveLength(3);
    const client = await reaches(`rediss-cluster://${cluster.ports.map((p) => `localhost:${tlsPortOf(p)}`).join(',')}`, 10_000);
    expect(client).toBeDefined();
    const store = createRedisStore(client!);
    const result = { output: 'sent', isError: false, resolvedToolName: 'send', truncated: false, resultHandle: '', durationMs: 1 };
    // Sessions until every master holds one (their keys are hash-tagged by session).
    for (let i = 0; i < 60 && cluster.ports.some((p) => cluster.cli(p, 'DBSIZE').trim() === '0'); i++) {
      const scope = { tenant: 't', sessionId: `s-${i}` };
      await store.beginAttempt({ scope, op: 'o', claim: { key: 'k', leaseMs: 10_000 } });
      await store.finishAttempt({ scope, op: 'o', idempotency: { key: 'k', action: 'complete', result, ttlSeconds: 60 } });
      const again = await store.beginAttempt({ scope, op: 'o', claim: { key: 'k', leaseMs: 10_000 } });
      expect(again.claim).toMatchObject({ state: 'completed', result: { output: 'sent' } });
    }
    expect(cluster.ports.map((p) => cluster.cli(p, 'DBSIZE').trim() !== '0')).toEqual([true, true, true]);
    await store.close();
  });

  test('a node resolved to its address is refused: the certificate names no IP address', async () => {
    // What ioredis's default DNS lookup would do to a node announced by name.
    expect(await reaches(`rediss-cluster://127.0.0.1:${tlsPortOf(cluster.ports[0]!)}`, 1_500)).toBeUndefined();
  });
});
