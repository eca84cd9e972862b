// docs/redis.md: with `appendonly yes` + `appendfsync always` an acknowledged idempotency record
// survives a hard restart of Redis, and with `appendonly no` (no RDB snapshots either) it is gone,
// so an identical side-effecting call runs again. The Helm chart's bundled Redis relies on the
// first; these tests show that the setting is what makes the difference.
import { randomUUID } from 'node:crypto';
import type { ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import type { SessionScope, StoredResult } from '../../src/store';
import { connectRedis, createRedisStore, whenReady, type RedisStore } from '../../src/store/redis';
import { startRedis, type Persistence, type TestRedis } from '../helpers/redis-server';
import { startApp, startToolServer, type ToolServer } from '../helpers/servers';

jest.setTimeout(30_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Calls `step` until it resolves with a value `accept` takes (Redis is back); fails after `ms`. */
async function untilAnswered<T>(step: () => Promise<T>, accept: (value: T) => boolean, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await step().catch(() => undefined);
    if (value !== undefined && accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`the restarted Redis did not give the awaited answer within ${ms} ms`);
    await sleep(100);
  }
}

const PAID: StoredResult = { output: 'paid r1', isError: false, resolvedToolName: 'pay', truncated: false, resultHandle: '', durationMs: 1 };

describe.each<[string, Persistence, string, boolean]>([
  ['appendonly yes + appendfsync always', 'aof-always', 'yes', true],
  ['appendonly no (and save "")', 'none', 'no', false],
])('Redis with %s, killed with SIGKILL and started again on the same port and directory', (_label, persistence, appendonly, survives) => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startRedis({ own: true, persistence });
    expect(redis.cli('CONFIG', 'GET', 'appendonly')).toBe(`appendonly\n${appendonly}\n`);
    expect(redis.cli('CONFIG', 'GET', 'save')).toBe('save\n\n');
  });
  afterAll(async () => {
    await redis?.close();
  });

  const restartHard = async () => {
    await redis.stop('SIGKILL');
    await redis.start();
  };

  test(`the store ${survives ? 'replays' : 'has forgotten'} a completed idempotency record`, async () => {
    const client = connectRedis(redis.url, { commandTimeoutMs: 500 });
    expect(await whenReady(client, 5000)).toBe(true);
    const store: RedisStore = createRedisStore(client, { timeoutMs: 500 });
    try {
      const scope: SessionScope = { tenant: 't', sessionId: `s-${randomUUID()}` };
      const claim = { key: 'pay-r1', leaseMs: 30_000 };
      expect((await store.beginAttempt({ scope, op: 'pay', claim })).claim).toEqual({ state: 'claimed' });
      await store.finishAttempt({ scope, op: 'pay', idempotency: { key: claim.key, action: 'complete', result: PAID, ttlSeconds: 3600 } });
      expect((await store.beginAttempt({ scope, op: 'pay', claim })).claim).toEqual({ state: 'completed', result: PAID });

      await restartHard();
      await untilAnswered(() => store.memory(scope), () => true);

      const after = (await store.beginAttempt({ scope, op: 'pay', claim })).claim;
      // `claimed` is what lets the pipeline run the tool again.
      expect(after).toEqual(survives ? { state: 'completed', result: PAID } : { state: 'claimed' });
    } finally {
      await store.close();
    }
  });

  describe('dispatch over it', () => {
    let tools: ToolServer;
    let app: Awaited<ReturnType<typeof startApp>>;
    const paid = () => tools.count('/pay');
    beforeAll(async () => {
      tools = await startToolServer({ '/pay': (_req, res) => void res.writeHead(200).end(`paid ${paid()}`) });
      const pay = `{ name: pay, effect: side_effect, input_schema: '{"type":"object"}', http: { url: "${tools.url}/pay" } }`;
      app = await startApp(`tools:\n  - ${pay}\n`, { redisUrl: redis.url });
    });
    afterAll(async () => {
      await app?.close();
      await tools?.close();
    });

    /** Each channel subscribed on Redis with its subscriber count, and the pattern count, as one text. */
    const subscriptions = () => {
      const channels = redis.cli('PUBSUB', 'CHANNELS').trim().split('\n').sort();
      return `${redis.cli('PUBSUB', 'NUMSUB', ...channels).trim().split('\n').join(' ')} | ${redis.cli('PUBSUB', 'NUMPAT').trim()}`;
    };
    const pay = async (sessionId: string): Promise<ToolResult> =>
      (await app.dispatch.dispatch({ sessionId, calls: [{ id: `c_${randomUUID()}`, name: 'pay', arguments: '{"ref":"r1"}' }] })).results[0]!;

    test(`an identical side-effecting call after the restart ${survives ? 'is replayed, the tool ran once' : 'runs the tool a second time'}`, async () => {
      const session = `s-${randomUUID()}`;
      expect(await pay(session)).toMatchObject({ isError: false, output: 'paid 1', idempotentReplay: false });
      // The replay shows the record is in Redis, acknowledged, before the kill.
      expect(await pay(session)).toMatchObject({ isError: false, output: 'paid 1', idempotentReplay: true });
      const subscribed = subscriptions();
      expect(subscribed).toMatch(/^\S+ [1-9]/);

      await restartHard();
      // While the client reconnects, side-effecting calls fail closed without running the tool.
      const after = await untilAnswered(() => pay(session), (r) => !r.isError);
      // ioredis resubscribes a pub/sub connection without a handler on its SUBSCRIBE; closing the
      // app before that is answered can reject it unhandled ("Connection is closed."), so wait
      // until Redis has every subscription back.
      await untilAnswered(async () => subscriptions(), (now) => now === subscribed);

      expect(after).toMatchObject(survives ? { output: 'paid 1', idempotentReplay: true } : { output: 'paid 2', idempotentReplay: false });
      expect(paid()).toBe(survives ? 1 : 2);
    });
  });
});
