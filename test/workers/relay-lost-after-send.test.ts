// A read-only call relayed to another replica, whose PUBLISH was written before the relay's Redis
// connection was lost, fails "may or may not have run" and is retried. ioredis sends the written
// PUBLISH again once it reconnects, so the hosting replica ran that first attempt until its
// deadline beside the retry, and its reply was dropped (measured: 3 runs of 3, both attempts
// assigned, no cancel). The first attempt is now cancelled on the hosting replica too.
// A PUBLISH Redis answers with an error (ReplyError: NOPERM, BUSY) ran nothing, though it was
// written: it was told "may or may not have run" as well (and a side-effecting call waited for a
// reply until its deadline). It is now refused as not executed, at once, naming the reply's code.
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startWorkerApp, type WorkerApp } from './worker-app';
import { echoAnswer, eventually, type TestWorker } from './worker-harness';

jest.setTimeout(30_000);

const REFUSED = 'Redis refused to pass the call on to the other dispatch replicas (its error reply NOPERM), so no worker could be reached; the call was not executed';
const reading = { name: 'x_read', inputSchema: '{"type":"object"}', effect: Effect.READ_ONLY, timeoutMs: 6_000 };
const writing = { name: 'x_write', inputSchema: '{"type":"object"}', effect: Effect.SIDE_EFFECT, timeoutMs: 6_000 };

let redis: TestRedis | undefined;
let a: WorkerApp | undefined;
let b: WorkerApp | undefined;
afterEach(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await redis?.close();
  a = b = redis = undefined;
});

/** Replica a hosts `tools` on one worker answering with `answer`; b reaches them through the relay. */
async function twoReplicas(tools: (typeof reading)[], answer: Parameters<WorkerApp['worker']>[0]['answer']): Promise<TestWorker> {
  redis = await startRedis({ own: true });
  // publishStallMs: how long a close waits for Redis.
  const options = { advertiseIntervalMs: 100, routeTtlMs: 1_000, publishStallMs: 200 };
  // The executors plugin alone: each replica keeps its records in its memory store, so that only the relay needs Redis.
  a = await startWorkerApp(options, { redisUrl: redis.url, only: true });
  b = await startWorkerApp(options, { redisUrl: redis.url, only: true });
  const worker = await a.worker({ id: 'on-a', tools, answer });
  await eventually(async () => (await b!.registry.listTools({})).tools.filter((x) => tools.some((t) => t.name === x.name)).length === tools.length, 5_000, 'the tools on replica b');
  return worker;
}

const call = (name: string, id: string) => b!.dispatch.dispatch({ sessionId: 's1', calls: [{ id, name, arguments: '{}' }] }).then((r) => r.results[0]!);

test("the relay's connection killed after a read-only assignment's PUBLISH was written: the retry answers, and the first attempt, sent again by ioredis, is cancelled on the worker", async () => {
  // The first attempt would answer after 2.5 s, the retry at once.
  const onA = await twoReplicas([reading], (x) => new Promise((r) => setTimeout(() => r({ output: JSON.stringify({ attempt: x.attempt }) }), x.attempt === 1 ? 2_500 : 0).unref()));
  redis!.cli('CLIENT', 'PAUSE', '10000', 'WRITE');
  const result = call('x_read', 'k');
  await new Promise((r) => setTimeout(r, 300));
  // The relays' command connections (their subscriptions are of type pubsub, and stay); Redis stays up.
  redis!.cli('CLIENT', 'KILL', 'TYPE', 'normal');
  redis!.cli('CLIENT', 'UNPAUSE');
  const answer = await result;
  expect(answer.error).toBeUndefined();
  expect(answer.attempts).toBe(2);
  expect(JSON.parse(answer.output)).toEqual({ attempt: 2 });
  // The first attempt reached the worker (sent again on reconnecting), and is cancelled before it answers.
  await eventually(() => onA.assignments.some((x) => x.attempt === 1), 2_000, 'the first attempt to reach the worker');
  const first = onA.assignments.find((x) => x.attempt === 1)!;
  const reachedAt = Date.now();
  await eventually(() => onA.cancels.includes(first.assignmentId), 2_000, 'the first attempt to be cancelled');
  expect(Date.now() - reachedAt).toBeLessThan(2_000);
  const second = onA.assignments.find((x) => x.attempt === 2)!;
  expect(onA.cancels).toEqual([first.assignmentId]);
  expect(second.assignmentId).not.toBe(first.assignmentId);
});

test('a PUBLISH Redis refuses (NOPERM) ran nothing: a read-only call and a side-effecting one are refused at once as not executed, not retried', async () => {
  const onA = await twoReplicas([reading, writing], echoAnswer('on-a'));
  // The relay's user may no longer PUBLISH; its route lookups still answer.
  redis!.cli('ACL', 'SETUSER', 'default', '-publish');
  const started = Date.now();
  const [read, write] = await Promise.all([call('x_read', 'r'), call('x_write', 'w')]);
  const ms = Date.now() - started;
  redis!.cli('ACL', 'SETUSER', 'default', '+publish');
  for (const refused of [read, write]) {
    // Told as Redis's refusal (only its code: the rest names Redis's users), not as a link down.
    expect(refused.error?.message).toBe(REFUSED);
    expect(refused.error).toMatchObject({ kind: ErrorKind.UNAVAILABLE, recoverable: true });
    expect(JSON.parse(refused.output)).toMatchObject({ kind: 'UNAVAILABLE', retry_after_ms: 5_000 });
    expect(refused.attempts).toBe(1);
  }
  // Not held until the tools' 6 s deadline.
  expect(ms).toBeLessThan(2_000);
  expect(onA.assignments).toEqual([]);
});
