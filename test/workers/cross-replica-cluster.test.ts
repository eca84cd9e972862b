import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startRedisCluster, type TestRedisCluster } from '../helpers/redis-server';
import { startWorkerApp, type WorkerApp } from './worker-app';
import { echoAnswer, eventually } from './worker-harness';

// Workers across replicas on a real three-master Redis Cluster. A PUBLISH there counts only the
// subscribers on the node that took it, so "no one received it" does not mean the other replica
// is gone: each call must run once, on the worker, and come back (a side-effecting call is
// awaited; for a read-only one every node is asked whether the other replica listens).

jest.setTimeout(60_000);

const tool = { name: 'x_tool', inputSchema: '{"type":"object"}', effect: Effect.SIDE_EFFECT, timeoutMs: 5_000 };

let cluster: TestRedisCluster;
let a: WorkerApp;
let b: WorkerApp;
beforeAll(async () => {
  cluster = await startRedisCluster(3);
  const options = { advertiseIntervalMs: 200, routeTtlMs: 1_000 };
  a = await startWorkerApp(options, { redisUrl: cluster.url });
  b = await startWorkerApp(options, { redisUrl: cluster.url });
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await cluster?.close();
});

test.each([
  ['side-effecting', tool],
  ['read-only', { ...tool, name: 'r_tool', effect: Effect.READ_ONLY }],
])('%s calls that arrive at one replica run once each on a worker connected to the other', async (_effect, spec) => {
  const worker = await a.worker({ id: `on-a-${spec.name}`, tools: [spec], answer: echoAnswer('on-a') });
  await eventually(async () => (await b.registry.listTools({})).tools.some((x) => x.name === spec.name), 5_000, 'the tool on replica b');
  for (let n = 0; n < 9; n++) {
    const result = (await b.dispatch.dispatch({ sessionId: `s${n}`, calls: [{ id: `c${n}`, name: spec.name, arguments: `{"n":${n}}` }] })).results[0]!;
    expect([result.isError, result.output]).toEqual([false, JSON.stringify({ worker: 'on-a', args: { n } })]);
  }
  expect(worker.assignments.map((x) => x.call?.id)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8].map((n) => `c${n}`));
});
