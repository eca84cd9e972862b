import { randomUUID } from 'node:crypto';
import { createLogger } from '../../src/log';
import { StoreUnavailableError, type SessionScope } from '../../src/store';
import { connectRedis, createRedisStore, whenReady } from '../../src/store/redis';
import { startRedis, type TestRedis } from '../helpers/redis-server';

// A finish step still in flight when the store closes (Redis stalled as dispatchd stops, or an
// embedder closing its store under load) failed after the close had stopped the waiting writes:
// its completion was queued all the same, and its retry timer, armed again at each failure, tried
// it on the closed client every pendingRetryMs for as long as the process lived, never logged.

jest.setTimeout(20_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const result = { output: 'ok', isError: false, resolvedToolName: 'send', truncated: false, resultHandle: '', durationMs: 1 };

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis({ own: true });
});
afterAll(async () => {
  redis.signal('SIGCONT');
  await redis?.close();
});

test('a completion that fails after the store closed is logged as unwritten, not tried again on the closed client for ever', async () => {
  const lines: string[] = [];
  const client = connectRedis(redis.url, { commandTimeoutMs: 300 });
  await whenReady(client, 5_000);
  const store = createRedisStore(client, { timeoutMs: 300, pendingRetryMs: 50, logger: createLogger('info', (line) => lines.push(line) > 0) });
  const scope: SessionScope = { tenant: 't', sessionId: `s-${randomUUID()}` };
  await store.beginAttempt({ scope, op: 'o', claim: { key: 'k', leaseMs: 10_000, owner: 'a1' } });
  let sent = 0;
  const send = client.sendCommand.bind(client) as (...args: unknown[]) => unknown;
  client.sendCommand = ((...args: unknown[]) => (sent++, send(...args))) as typeof client.sendCommand;
  redis.signal('SIGSTOP');
  const finishing = store.finishAttempt({ scope, op: 'o', idempotency: { key: 'k', action: 'complete', result, ttlSeconds: 60 } });
  const closing = store.close();
  await expect(finishing).rejects.toBeInstanceOf(StoreUnavailableError);
  redis.signal('SIGCONT');
  await closing;
  for (const deadline = Date.now() + 2_000; client.status !== 'end' && Date.now() < deadline; ) await sleep(10);
  expect(client.status).toBe('end');
  const afterClose = sent;
  await sleep(600);
  expect(sent - afterClose).toBe(0);
  expect(lines.filter((l) => /unwritten|not written|could not be written/.test(l)).length).toBeGreaterThan(0);
});
