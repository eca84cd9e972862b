import { StoreUnavailableError, type Store } from '../../src/store';
import { connectRedis, createRedisStore } from '../../src/store/redis';
import { closedPort } from '../helpers/servers';

// EraseTenant's walk (Store.tenantSessions) on a Redis it cannot reach fails, so EraseTenant answers
// UNAVAILABLE, rather than finding nothing and answering that no session was there to end: a
// Cluster client still connecting knows no master (its walk over none would have found nothing),
// and a standalone client refuses the SCAN.

async function walk(store: Store): Promise<unknown> {
  try {
    for await (const batch of store.tenantSessions('acme')) void batch;
    return 'walked';
  } catch (error) {
    return error;
  }
}

test.each([
  ['a Cluster client with no master known', 'redis-cluster', /^redis cluster is not ready to walk every master \(\w+, 0 masters known, 0 of 16384 slots mapped\)$/],
  ['a standalone client', 'redis', /^redis failed a scan of the tenant's sessions: /],
])('%s: the walk fails StoreUnavailableError', async (_what, scheme, message) => {
  const client = connectRedis(`${scheme}://127.0.0.1:${await closedPort()}`);
  const store = createRedisStore(client, { timeoutMs: 500 });
  try {
    const failed = await walk(store);
    expect(failed).toBeInstanceOf(StoreUnavailableError);
    expect((failed as Error).message).toMatch(message);
  } finally {
    await store.close();
  }
});
