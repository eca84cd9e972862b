import { connectRedis, createRedisStore, whenReady } from '../../src/store/redis';
import { startRedis, startSentinel, type TestRedis, type TestSentinel } from '../helpers/redis-server';
import { describeStoreContract, redisContractOptions } from './store-contract';

jest.setTimeout(60_000);

const NAME = 'dispatch-master';
let master: TestRedis;
let replica: TestRedis;
let sentinel: TestSentinel;
beforeAll(async () => {
  master = await startRedis({ own: true });
  replica = await startRedis({ own: true });
  replica.cli('REPLICAOF', '127.0.0.1', String(master.port));
  sentinel = await startSentinel(master.port, NAME, { downAfterMs: 1000, failoverTimeoutMs: 5000 });
});
afterAll(async () => {
  await sentinel?.close();
  await replica?.close();
  await master?.close();
});

const sentinelUrl = () => `redis-sentinel://127.0.0.1:${sentinel.port}/${NAME}`;

async function sentinelStore() {
  const client = connectRedis(sentinelUrl());
  if (!(await whenReady(client, 10_000))) throw new Error('the sentinel did not lead to a ready master');
  return { client, store: createRedisStore(client) };
}

describeStoreContract('redis (through Sentinel)', async (options) => {
  const client = connectRedis(sentinelUrl());
  if (!(await whenReady(client, 10_000))) throw new Error('the sentinel did not lead to a ready master');
  return createRedisStore(client, redisContractOptions(options));
});

test('a redis-sentinel:// URL finds the master through the sentinel', async () => {
  const { store } = await sentinelStore();
  try {
    const scope = { tenant: 't', sessionId: 's' };
    expect((await store.beginAttempt({ scope, op: 'o', claim: { key: 'via-sentinel', leaseMs: 5000 } })).claim).toEqual({ state: 'claimed' });
    expect((await store.beginAttempt({ scope, op: 'o', claim: { key: 'via-sentinel', leaseMs: 5000 } })).claim).toEqual({ state: 'in_progress' });
    expect(master.cli('--scan', '--pattern', 'dispatch:*:idem:via-sentinel').trim()).toMatch(/^dispatch:\{dA:cw\}:idem:via-sentinel$/);
  } finally {
    await store.close();
  }
});

// Last: it kills the master. A record the replica acknowledged (WAIT) is still there after the
// sentinel promotes the replica, and the same client carries on against the new master.
test('failover: the sentinel promotes the replica; replicated records replay and new claims work through the same URL', async () => {
  const { client, store } = await sentinelStore();
  try {
    const scope = { tenant: 't', sessionId: 'failover' };
    const result = { output: 'sent', isError: false, resolvedToolName: 'send', truncated: false, resultHandle: '', durationMs: 3 };
    expect((await store.beginAttempt({ scope, op: 'o', claim: { key: 'done', leaseMs: 60_000 } })).claim).toEqual({ state: 'claimed' });
    await store.finishAttempt({ scope, op: 'o', idempotency: { key: 'done', action: 'complete', result, ttlSeconds: 600 } });
    // Replication is asynchronous: wait until the replica has the record before the crash. Each
    // WAIT stays under the client's 1 s command timeout (a busy machine can take longer in all).
    let acknowledged = 0;
    for (let tries = 0; tries < 20 && acknowledged < 1; tries++) acknowledged = Number(await client.call('WAIT', '1', '500'));
    expect(acknowledged).toBe(1);
    // The sentinel fails over only to a replica it knows, linked to the master: it learns of one
    // from the master's INFO, every 10 s.
    const known = Date.now() + 15_000;
    while (!/\nslave\n[\s\S]*\nmaster-link-status\nok\n/.test(sentinel.cli('SENTINEL', 'REPLICAS', NAME))) {
      if (Date.now() > known) throw new Error(`the sentinel does not know the replica: ${sentinel.cli('SENTINEL', 'REPLICAS', NAME)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    await master.stop('SIGKILL');
    const deadline = Date.now() + 40_000;
    let claim: unknown;
    let failure = '';
    for (;;) {
      try {
        claim = (await store.beginAttempt({ scope, op: 'o', claim: { key: 'done', leaseMs: 60_000 } })).claim;
        if (replica.cli('ROLE').startsWith('master')) break;
      } catch (error) {
        // STORE_UNAVAILABLE until the sentinel has promoted the replica and the client found it.
        failure = (error as Error).message;
      }
      // Twice in loaded clean-clone CI runs, no failover within 30 s: what each side saw is told.
      if (Date.now() > deadline) {
        const named = sentinel.cli('SENTINEL', 'get-master-addr-by-name', NAME).trim().split('\n').join(':');
        throw new Error(`no failover within 40 s; the store said: ${failure}; its client is ${client.status}; the sentinel names the master ${named} (the replica is on ${replica.port}); the replica's role: ${replica.cli('ROLE').split('\n')[0]}; the sentinel's log:\n${sentinel.logTail(40)}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(claim).toEqual({ state: 'completed', result });
    expect((await store.beginAttempt({ scope, op: 'o', claim: { key: 'new', leaseMs: 60_000 } })).claim).toEqual({ state: 'claimed' });
    expect(replica.cli('--scan', '--pattern', 'dispatch:*:idem:new').trim()).not.toBe('');
  } finally {
    await store.close();
  }
}, 90_000);
