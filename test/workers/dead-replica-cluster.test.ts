import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startRedisCluster, type TestRedisCluster } from '../helpers/redis-server';
import { startDoomedReplica, type DoomedReplica } from './doomed-replica';
import { startWorkerApp, type WorkerApp } from './worker-app';
import { echoAnswer, eventually, startWorker, type TestWorker } from './worker-harness';

// A replica hosting a worker's tool is killed (SIGKILL: it withdraws nothing, its routes stay in
// Redis up to their TTL, 15 s) on a real three-master Redis Cluster, where a PUBLISH that reached
// no one on its node does not mean no one listens. A side-effecting call arriving at the other
// replica meanwhile is not sent to the dead one (no node has a subscriber on its channel): it ends
// at once UNAVAILABLE, not executed, instead of being awaited until its deadline and ending
// OUTCOME_UNKNOWN though it never ran.

jest.setTimeout(60_000);

const pay = { name: 'x_pay', inputSchema: '{"type":"object"}', effect: Effect.SIDE_EFFECT, timeoutMs: 8_000 };

let cluster: TestRedisCluster;
let doomed: DoomedReplica;
let caller: WorkerApp;
let worker: TestWorker | undefined;
beforeAll(async () => {
  cluster = await startRedisCluster(3);
  doomed = await startDoomedReplica(cluster.url);
  caller = await startWorkerApp({}, { redisUrl: cluster.url });
});
afterAll(async () => {
  await worker?.close().catch(() => undefined);
  doomed?.close();
  await caller?.close();
  await cluster?.close();
});

const call = (id: string) => caller.dispatch.dispatch({ sessionId: 's', calls: [{ id, name: 'x_pay', arguments: `{"id":"${id}"}` }] }).then((r) => r.results[0]!);

test('a side-effecting call is not sent to a replica that died with its routes still up', async () => {
  worker = startWorker(`127.0.0.1:${doomed.port}`, { id: 'on-doomed', tools: [pay], answer: echoAnswer('on-doomed') });
  await eventually(async () => (await caller.registry.listTools({})).tools.some((x) => x.name === 'x_pay'), 10_000, 'the tool shared with the caller');
  // Through the live replica first: the call runs on the worker and comes back.
  expect(await call('alive')).toMatchObject({ isError: false, output: JSON.stringify({ worker: 'on-doomed', args: { id: 'alive' } }) });

  doomed.child.kill('SIGKILL');
  await doomed.exited;
  const started = Date.now();
  const result = await call('after-kill');
  const took = Date.now() - started;
  expect(result.isError).toBe(true);
  expect(result.error?.kind).toBe(ErrorKind.UNAVAILABLE);
  expect(result.output).toMatch(/not executed/);
  // Well before the tool's 8 s deadline (and the routes' 15 s TTL).
  expect(took).toBeLessThan(4_000);
  expect(worker.assignments.map((a) => a.call?.id)).toEqual(['alive']);
});
