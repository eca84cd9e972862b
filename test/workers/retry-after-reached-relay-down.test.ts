// A read-only call relayed to another replica's worker, which went away while it ran, is retried;
// a retry finding the link to the other replicas (Redis) down said "the call was not executed",
// untrue of the attempt the worker received (only a retry finding no worker said otherwise). Every
// refusal before running now says, after such an attempt, that this attempt was not executed and
// the call may have run; its kind and its "call again later" options are kept.
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startWorkerApp, type WorkerApp } from './worker-app';
import { eventually, type TestWorker } from './worker-harness';

jest.setTimeout(20_000);

const tool = { name: 'x_read', inputSchema: '{"type":"object"}', effect: Effect.READ_ONLY, timeoutMs: 5_000, retry: { initialBackoffMs: 600 } };

let redis: TestRedis;
let a: WorkerApp;
let b: WorkerApp;
afterEach(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await redis?.close();
});

test('a relayed read-only call whose worker went away, retried while the relay is down, says an earlier attempt was sent (not "the call was not executed")', async () => {
  redis = await startRedis({ own: true });
  // publishStallMs: how long a close waits for Redis, gone by then.
  const options = { advertiseIntervalMs: 100, routeTtlMs: 1_000, publishStallMs: 200 };
  a = await startWorkerApp(options, { redisUrl: redis.url, only: true });
  b = await startWorkerApp(options, { redisUrl: redis.url, only: true });
  let dying!: TestWorker;
  let killed: Promise<void> | undefined;
  dying = await a.worker({
    id: 'on-a',
    tools: [tool],
    // Gone while running the call; Redis killed once its reply (the worker gone) has crossed, before the retry.
    answer: () => {
      setImmediate(() => dying.disconnect());
      killed = new Promise((r) => setTimeout(r, 200)).then(() => redis.stop('SIGKILL'));
    },
  });
  await eventually(async () => (await b.registry.listTools({})).tools.some((x) => x.name === 'x_read'), 5_000, 'the tool on replica b');
  const result = (await b.dispatch.dispatch({ sessionId: 's1', calls: [{ id: 'c1', name: 'x_read', arguments: '{}' }] })).results[0]!;
  await killed;
  expect(dying.assignments).toHaveLength(1);
  expect(result.attempts).toBe(2);
  expect(result.error).toMatchObject({ kind: ErrorKind.UNAVAILABLE, recoverable: true });
  expect(JSON.parse(result.output)).toMatchObject({ retry_after_ms: 5_000 });
  expect(result.error?.message).toBe(
    'the link to other dispatch replicas (Redis) is down, so no worker could be reached; this attempt was not executed; an earlier attempt was sent to a worker (the call may or may not have run)',
  );
});
