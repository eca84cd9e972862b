// A side-effecting worker call forwarded to another replica while Redis is frozen (SIGSTOP): its
// route lookup waits in the relay's queue and the call's timeout passes with nothing sent. It
// failed as cut off DURING, so its idempotency record became outcome unknown and the same call,
// once Redis was back, got OUTCOME_UNKNOWN (for the record's TTL) though no worker ever saw it.
// Now the relay says what it sent: the call fails UNAVAILABLE, not executed, and the same call runs.
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { replicasSharingRedis, type WorkerApp } from './worker-app';
import { echoAnswer, eventually } from './worker-harness';

jest.setTimeout(30_000);

const tool = { name: 'x_pay', inputSchema: '{"type":"object"}', effect: Effect.SIDE_EFFECT, timeoutMs: 600 };
const call = (t: WorkerApp, id: string) => t.dispatch.dispatch({ sessionId: 's1', calls: [{ id, name: 'x_pay', arguments: '{"n":1}' }] }).then((r) => r.results[0]!);

// The executors plugin alone: each replica keeps its idempotency records in its memory store.
const replicas = replicasSharingRedis({ advertiseIntervalMs: 200, routeTtlMs: 5_000, publishStallMs: 300 }, { only: true });

test('a forwarded call whose timeout passes while Redis holds its route lookup was not executed, and runs when called again', async () => {
  const { redis, a, b } = replicas;
  const worker = await a.worker({ id: 'on-a', tools: [tool], answer: echoAnswer('on-a') });
  await eventually(async () => (await b.registry.listTools({})).tools.some((x) => x.name === 'x_pay'), 5_000, 'the tool on replica b');
  redis.signal('SIGSTOP');
  let held;
  try {
    held = await call(b, 'c1');
  } finally {
    redis.signal('SIGCONT');
  }
  expect(held.error?.kind).toBe(ErrorKind.UNAVAILABLE);
  expect(held.error?.message).toBe('could not reach the tool within 600 ms; nothing was sent to it');
  const seen: (ErrorKind | undefined)[] = [];
  await eventually(async () => {
    const again = await call(b, 'c2');
    seen.push(again.error?.kind);
    return again.error === undefined;
  }, 10_000, 'the same call to run');
  expect(seen).not.toContain(ErrorKind.OUTCOME_UNKNOWN);
  expect(worker.assignments).toHaveLength(1);
});
