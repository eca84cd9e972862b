import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startWorkerApp, type WorkerApp } from './worker-app';
import { eventually } from './worker-harness';

// A replica that drains (SIGTERM) stops taking work for its workers: it withdraws its routes, so
// other replicas stop relaying calls to it, and refuses (before execution) a call relayed anyway.
// The call its worker holds finishes, and the replica stops as soon as it has.

jest.setTimeout(30_000);

const tool = { name: 'x_job', inputSchema: '{"type":"object"}', effect: Effect.SIDE_EFFECT, timeoutMs: 20_000 };
let redis: TestRedis;
let a: WorkerApp;
let b: WorkerApp;
beforeAll(async () => {
  redis = await startRedis({ own: true });
  const options = { advertiseIntervalMs: 200, routeTtlMs: 1_000 };
  a = await startWorkerApp(options, { redisUrl: redis.url, only: true });
  b = await startWorkerApp(options, { redisUrl: redis.url, only: true });
});
afterAll(async () => {
  await a.close();
  b.dispatch.close();
  b.registry.close();
  await redis.close();
});

test('a draining replica takes no new relayed call, and stops once its worker is done', async () => {
  const received: string[] = [];
  const worker = await b.worker({
    id: 'on-b',
    tools: [tool],
    answer: (assignment) => {
      received.push(assignment.call!.id);
      return new Promise((r) => setTimeout(() => r({ output: `done ${assignment.call?.id}` }), 1_500));
    },
  });
  await eventually(async () => (await a.registry.listTools({})).tools.some((t) => t.name === 'x_job'), 5_000, 'the tool seen from A');
  const call = (id: string) => a.dispatch.dispatch({ sessionId: 's', calls: [{ id, name: 'x_job', arguments: JSON.stringify({ id }) }] }).then((r) => r.results[0]!);
  const first = call('c0');
  await eventually(() => worker.assignments.length === 1, 5_000, 'c0 assigned');
  const drained = Date.now();
  const closing = b.app.close(3_000).then(() => Date.now() - drained);
  const later: ReturnType<typeof call>[] = [];
  for (let i = 1; i <= 4; i++) {
    await new Promise((r) => setTimeout(r, 300));
    later.push(call(`c${i}`));
  }
  expect((await first).output).toBe('done c0');
  // The calls sent while B drained were not executed there, and say so (no worker anywhere else).
  for (const result of await Promise.all(later)) {
    expect(result.isError).toBe(true);
    expect(result.output).toMatch(/not executed/);
  }
  expect(received).toEqual(['c0']);
  // Done once c0 is (1.5 s), well before the grace period's end.
  expect(await closing).toBeLessThan(2_800);
});
