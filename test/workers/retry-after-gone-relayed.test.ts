// A read-only call relayed to another replica's worker, which went away while it ran, is retried;
// the retry finding no worker anywhere said "the call was not executed", untrue of the attempt the
// worker received. It now says an earlier attempt was sent. A call none of whose attempts reached a
// worker still says it was not executed.
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startWorkerApp, type WorkerApp } from './worker-app';
import { echoAnswer, eventually, type TestWorker } from './worker-harness';

jest.setTimeout(20_000);

const tool = { name: 'x_read', inputSchema: '{"type":"object"}', effect: Effect.READ_ONLY, timeoutMs: 5_000, retry: { initialBackoffMs: 300 } };
const call = (t: WorkerApp, id: string) => t.dispatch.dispatch({ sessionId: 's1', calls: [{ id, name: 'x_read', arguments: '{}' }] }).then((r) => r.results[0]!);
const listed = async (t: WorkerApp) => (await t.registry.listTools({})).tools.some((x) => x.name === 'x_read');

let redis: TestRedis;
let a: WorkerApp;
let b: WorkerApp;
beforeAll(async () => {
  redis = await startRedis({ own: true });
  const options = { advertiseIntervalMs: 100, routeTtlMs: 1_000 };
  a = await startWorkerApp(options, { redisUrl: redis.url, only: true });
  b = await startWorkerApp(options, { redisUrl: redis.url, only: true });
});
afterAll(async () => {
  await a.close();
  await b.close();
  await redis.close();
});

test('a relayed read-only call whose worker went away is retried, and the retry finding no worker says an earlier attempt was sent', async () => {
  let dying!: TestWorker;
  dying = await a.worker({ id: 'on-a', tools: [tool], answer: () => void setImmediate(() => dying.disconnect()) });
  await eventually(() => listed(b), 5_000, 'the tool on replica b');
  const result = await call(b, 'c1');
  expect(dying.assignments).toHaveLength(1);
  expect(result.error?.kind).toBe(ErrorKind.UNAVAILABLE);
  expect(result.error?.recoverable).toBe(true);
  expect(result.attempts).toBe(2);
  expect(result.error?.message).toBe('no worker is connected any longer for tool "x_read" to try the call again; an earlier attempt was sent to a worker (the call may or may not have run)');
});

test('a relayed call none of whose attempts reached a worker says it was not executed', async () => {
  const worker = await a.worker({ id: 'on-a', tools: [tool], answer: echoAnswer('on-a') });
  await eventually(() => listed(b), 5_000, 'the tool on replica b');
  await worker.close();
  const result = await call(b, 'c2');
  expect(result.attempts).toBe(2);
  expect(result.error?.message).toBe('no worker is connected for tool "x_read"; the call was not executed');
});
