import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startRedisCluster, type TestRedisCluster } from '../helpers/redis-server';
import { startWorkerApp, type WorkerApp } from './worker-app';
import { echoAnswer, eventually, type TestWorker } from './worker-harness';

// Workers across replicas on a real three-master Redis Cluster. A PUBLISH there counts only the
// subscribers on the node that took it, so "no one received it" does not mean the other replica
// is gone: each call must run once, on the worker, and come back (a side-effecting call is
// awaited; for a read-only one every node is asked whether the other replica listens). The two
// tools' routes live on different masters (slots 7485 and 4990), so refreshing them must not
// need one node for both.

jest.setTimeout(60_000);

const sideEffecting = { name: 'x_tool', inputSchema: '{"type":"object"}', effect: Effect.SIDE_EFFECT, timeoutMs: 5_000 };
const readOnly = { ...sideEffecting, name: 'u_tool', effect: Effect.READ_ONLY };
/** Routes live this long past their last refresh (every 200 ms). */
const ROUTE_TTL_MS = 2_000;

let cluster: TestRedisCluster;
let a: WorkerApp;
let b: WorkerApp;
const workers = new Map<string, TestWorker>();
beforeAll(async () => {
  cluster = await startRedisCluster(3);
  const options = { advertiseIntervalMs: 200, routeTtlMs: ROUTE_TTL_MS };
  a = await startWorkerApp(options, { redisUrl: cluster.url });
  b = await startWorkerApp(options, { redisUrl: cluster.url });
  for (const spec of [sideEffecting, readOnly]) workers.set(spec.name, await a.worker({ id: `on-a-${spec.name}`, tools: [spec], answer: echoAnswer('on-a') }));
  await eventually(async () => (await b.registry.listTools({})).tools.filter((x) => x.name === 'x_tool' || x.name === 'u_tool').length === 2, 5_000, 'both tools on replica b');
  // Past the first routes' lifetime: only refreshed routes lead to a's workers now.
  await new Promise((r) => setTimeout(r, ROUTE_TTL_MS + 500));
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await cluster?.close();
});

test.each([
  ['side-effecting', sideEffecting.name],
  ['read-only', readOnly.name],
])('%s calls that arrive at one replica run once each on a worker connected to the other', async (_effect, name) => {
  for (let n = 0; n < 9; n++) {
    const result = (await b.dispatch.dispatch({ sessionId: `s${n}`, calls: [{ id: `c${n}`, name, arguments: `{"n":${n}}` }] })).results[0]!;
    expect([result.isError, result.output]).toEqual([false, JSON.stringify({ worker: 'on-a', args: { n } })]);
  }
  expect(workers.get(name)!.assignments.map((x) => x.call?.id)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8].map((n) => `c${n}`));
});
