import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { replicasSharingRedis, type WorkerApp } from './worker-app';
import { echoAnswer, eventually } from './worker-harness';

// Workers of one tool declaring different effects (one mid-upgrade), on two replicas: the tool is
// registered read-only (the last hello's, B's worker), and replica A's only worker declared it
// side-effecting, so it may not run A's calls (see runsAsRegistered). Such a call goes through the
// relay to B's worker, as one no worker here can receive does; before, A refused it "not executed"
// though a worker that may run it was connected to B.

jest.setTimeout(30_000);

const charge = (effect: Effect) => ({ name: 'charge', inputSchema: '{"type":"object"}', effect });
const call = (t: WorkerApp, i: number) => t.dispatch.dispatch({ sessionId: `s${i}`, calls: [{ id: `c${i}`, name: 'charge', arguments: `{"i":${i}}` }] }).then((r) => r.results[0]!);
const REFUSAL = `no worker connected for tool "charge" runs it as registered (read-only): worker "on-a" declares it side-effecting; the tool's registration comes from another worker's hello; the call was not executed`;

const pair = replicasSharingRedis({ advertiseIntervalMs: 200, routeTtlMs: 1_000 });

test("a call registered read-only that A's side-effecting worker may not run goes to B's read-only worker; with B's gone, A's refusal stands", async () => {
  const { a, b } = pair;
  const onA = await a.worker({ id: 'on-a', tools: [charge(Effect.SIDE_EFFECT)], answer: echoAnswer('on-a') });
  const onB = await b.worker({ id: 'on-b', tools: [charge(Effect.READ_ONLY)], answer: echoAnswer('on-b') });
  await eventually(async () => (await a.registry.listTools({})).tools.find((x) => x.name === 'charge')?.effect === Effect.READ_ONLY, 5_000, 'the read-only registration on A');

  const results = await Promise.all([1, 2, 3].map((i) => call(a, i)));
  expect(results.map((r) => r.error?.message ?? JSON.parse(r.output).worker)).toEqual(['on-b', 'on-b', 'on-b']);
  expect(onA.assignments).toHaveLength(0);
  expect(onB.assignments).toHaveLength(3);

  onB.disconnect();
  let i = 100;
  let last: Awaited<ReturnType<typeof call>> | undefined;
  await eventually(async () => (last = await call(a, i++)).error?.message === REFUSAL, 5_000, 'the refusal once on-b is gone');
  expect(last!.error?.kind).toBe(ErrorKind.UNAVAILABLE);
  expect(onA.assignments).toHaveLength(0);
});
