import type { Logger } from '../../src/log';
import { createMemoryStore, StoreUnavailableError, type SessionScope, type Store } from '../../src/store';
import { connectRedis, createRedisStore, whenReady } from '../../src/store/redis';
import { createSessionEndListeners } from '../../src/store/session-end-listeners';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { fresh, sleep } from './contract-fixtures';

// EndSession waits for what its session-end listeners return (a scratch directory's removal), within
// the store's timeout; and on Redis, an end whose answer did not come in time is still told to this
// replica's listeners, since the script may have run.

let redis: TestRedis;
const stores: Store[] = [];
const warnings: string[] = [];
const logger: Logger = { debug: () => undefined, info: () => undefined, warn: (message) => void warnings.push(message), error: () => undefined };

async function redisStore(timeoutMs: number): Promise<Store> {
  const client = connectRedis(redis.url, { commandTimeoutMs: timeoutMs });
  await whenReady(client, 5000);
  const store = createRedisStore(client, { timeoutMs, logger });
  stores.push(store);
  return store;
}
function memoryStore(): Store {
  const store = createMemoryStore({ logger });
  stores.push(store);
  return store;
}

beforeAll(async () => {
  redis = await startRedis({ own: true });
});
afterEach(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()));
  warnings.splice(0);
});
afterAll(async () => {
  await redis?.close();
});

describe.each([
  ['the memory store', 1000, async () => memoryStore()],
  ['the Redis store', 300, async () => redisStore(300)],
])('with %s', (_name, boundMs, make) => {
  test("endSession resolves after the promises the listeners return; a listener's rejection is logged, not thrown", async () => {
    const store = await make();
    const done: string[] = [];
    store.onSessionEnd(async () => {
      await sleep(100);
      done.push('slow');
    });
    store.onSessionEnd(() => Promise.reject(new Error('could not')));
    store.onSessionEnd(() => void done.push('sync'));
    await expect(store.endSession(fresh())).resolves.toBeUndefined();
    expect(done).toEqual(['sync', 'slow']);
    expect(warnings).toEqual(['a session end listener failed']);
  });

  test(`a listener that does not finish holds endSession for the bound only (${boundMs} ms)`, async () => {
    const store = await make();
    store.onSessionEnd(() => new Promise<void>(() => undefined));
    const started = Date.now();
    await expect(store.endSession(fresh())).resolves.toBeUndefined();
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(boundMs - 20);
    expect(took).toBeLessThan(boundMs + 500);
    expect(warnings).toEqual(['session end listeners did not finish in time; their work goes on']);
  });
});

test("on Redis, an end whose script timed out after it was sent is told to this replica's listeners, and it did happen", async () => {
  const store = await redisStore(300);
  const scope = fresh();
  await store.finishAttempt({ scope, op: 'o', memory: { entry: 'remembered', max: 10, ttlSeconds: 60 } });
  expect(await store.memory(scope)).toEqual(['remembered']);
  const heard: SessionScope[] = [];
  store.onSessionEnd((ended) => void heard.push(ended));
  redis.signal('SIGSTOP');
  try {
    await expect(store.endSession(scope)).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(heard).toEqual([scope]);
  } finally {
    redis.signal('SIGCONT');
  }
  // The script was sent before the timeout: Redis runs it once it wakes, before the next read.
  expect(await store.memory(scope)).toEqual([]);
  expect(heard).toEqual([scope]);
});

test('the wait bound must be a finite number of ms', () => {
  expect(() => createSessionEndListeners({ waitMs: -1 })).toThrow('session end listeners: waitMs must be a finite number of ms, 0 or more, got -1');
  expect(() => createSessionEndListeners({ waitMs: Infinity })).toThrow('got Infinity');
});
