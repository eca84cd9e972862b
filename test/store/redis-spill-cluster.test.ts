import { connectRedis, createRedisStore, sessionKeys, whenReady, type RedisStore } from '../../src/store/redis';
import { newResultHandle, type SessionScope } from '../../src/store';
import { startRedisCluster, type TestRedisCluster } from '../helpers/redis-server';

// On a Cluster, a spill's room is checked on the node that owns its session's slot (the script
// runs there): a full node refuses it, while a session on another node keeps its spill.

jest.setTimeout(60_000);

let cluster: TestRedisCluster;
let store: RedisStore;
beforeAll(async () => {
  cluster = await startRedisCluster(3);
  const client = connectRedis(cluster.url);
  if (!(await whenReady(client, 10_000))) throw new Error(`redis cluster at ${cluster.url} is not ready`);
  store = createRedisStore(client);
});
afterAll(async () => {
  await store?.close();
  await cluster?.close();
});

/** The port of the node that holds `scope`'s keys. */
async function ownerOf(scope: SessionScope): Promise<number> {
  await store.finishAttempt({ scope, op: 'o', record: { result: 'h', failed: false, window: 10 } });
  const key = sessionKeys(scope).window;
  return cluster.ports.find((port) => cluster.cli(port, 'EXISTS', key).trim() === '1')!;
}

async function spillKept(scope: SessionScope): Promise<boolean> {
  const handle = newResultHandle(scope.sessionId);
  const text = 'x'.repeat(3 * 1024 * 1024);
  await store.finishAttempt({ scope, op: 'o', spill: { handle, text, ttlSeconds: 60 } });
  return (await store.readResult(scope.tenant, handle)) === text;
}

test('the node that owns the session checks the room for its spill', async () => {
  const full = { tenant: 't', sessionId: 'full' };
  const fullPort = await ownerOf(full);
  let other: SessionScope = { tenant: 't', sessionId: 'other-0' };
  for (let i = 1; (await ownerOf(other)) === fullPort; i++) other = { tenant: 't', sessionId: `other-${i}` };
  const used = Number(/\nused_memory:(\d+)/.exec(cluster.cli(fullPort, 'INFO', 'memory'))![1]);
  cluster.cli(fullPort, 'CONFIG', 'SET', 'maxmemory', String(used + 4 * 1024 * 1024));
  try {
    expect(await spillKept(full)).toBe(false);
    expect(await spillKept(other)).toBe(true);
  } finally {
    cluster.cli(fullPort, 'CONFIG', 'SET', 'maxmemory', '0');
  }
  expect(await spillKept(full)).toBe(true);
});
