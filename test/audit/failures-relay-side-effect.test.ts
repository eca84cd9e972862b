import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startWorkerApp, type WorkerApp } from '../workers/worker-app';
import { echoAnswer, eventually, type TestWorker } from '../workers/worker-harness';

// docs/failures.md, Redis (the worker relay) lost while a relayed call's assignment is on its way:
// a side-effecting call whose PUBLISH was written waits for its answer up to its deadline, as
// ioredis sends a written command again once it reconnects. The relay's tests show it for
// read-only calls; here a side-effecting one, relayed from replica b to a's worker.

jest.setTimeout(30_000);

let redis: TestRedis | undefined;
let a: WorkerApp | undefined;
let b: WorkerApp | undefined;
let onA: TestWorker | undefined;
afterEach(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await redis?.close();
  a = b = redis = onA = undefined;
});

const pay = (id: string) => b!.dispatch.dispatch({ sessionId: 's', calls: [{ id, name: 'x_pay', arguments: JSON.stringify({ id }) }] }).then((r) => r.results[0]!);

/** Replica a hosts x_pay (side-effecting, `timeoutMs`, 4 s unless told), which b reaches through the relay (each keeps its records in memory). */
async function twoReplicas(timeoutMs = 4_000): Promise<void> {
  redis = await startRedis({ own: true });
  const options = { advertiseIntervalMs: 200, routeTtlMs: 5_000, publishStallMs: 200 };
  a = await startWorkerApp(options, { redisUrl: redis.url, only: true });
  b = await startWorkerApp(options, { redisUrl: redis.url, only: true });
  onA = await a.worker({ id: 'on-a', tools: [{ name: 'x_pay', inputSchema: '{"type":"object"}', effect: Effect.SIDE_EFFECT, timeoutMs }], answer: echoAnswer('on-a') });
  await eventually(async () => (await pay('warm')).error === undefined, 5_000, 'x_pay to reach replica a');
}

/** Starts a call on b while Redis holds writes (its PUBLISH written, unanswered), then `lose`s the link 300 ms later. */
async function sentThenLost(lose: () => Promise<void> | void) {
  redis!.cli('CLIENT', 'PAUSE', '10000', 'WRITE');
  const started = Date.now();
  const pending = pay('p1');
  await new Promise((r) => setTimeout(r, 300));
  await lose();
  return { result: await pending, ms: Date.now() - started };
}

test("the relay's connection killed after a side-effecting assignment's PUBLISH was written: the call waits, and the worker's answer comes back once", async () => {
  await twoReplicas();
  const { result } = await sentThenLost(() => {
    redis!.cli('CLIENT', 'KILL', 'TYPE', 'normal');
    redis!.cli('CLIENT', 'UNPAUSE');
  });
  expect(result).toMatchObject({ isError: false, attempts: 1, output: JSON.stringify({ worker: 'on-a', args: { id: 'p1' } }) });
  expect(onA!.assignments.filter((x) => x.call?.id === 'p1')).toHaveLength(1);
  expect(await pay('p1')).toMatchObject({ isError: false, idempotentReplay: true });
});

test('Redis killed after a side-effecting assignment was written: the call waits until its deadline, may have run, and the same call is OUTCOME_UNKNOWN', async () => {
  // A 2 s deadline: Redis is killed 300 ms into the call, so a call that did not wait would end long before it.
  await twoReplicas(2_000);
  const { result, ms } = await sentThenLost(() => redis!.stop('SIGKILL'));
  expect(result.error).toMatchObject({ kind: ErrorKind.TIMEOUT, recoverable: false });
  expect(JSON.parse(result.output)).toMatchObject({ suggestion: expect.stringContaining('verify its effect (for example by reading the current state) before anything else. The same call again is answered OUTCOME_UNKNOWN') });
  expect(result.attempts).toBe(1);
  expect(ms).toBeGreaterThanOrEqual(1_900);
  expect(ms).toBeLessThan(3_500);
  expect((await pay('p1')).error?.kind).toBe(ErrorKind.OUTCOME_UNKNOWN);
});
