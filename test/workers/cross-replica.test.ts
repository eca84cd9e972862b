import { Redis } from 'ioredis';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startWorkerApp, type WorkerApp } from './worker-app';
import { echoAnswer, eventually, type TestWorker } from './worker-harness';

const tool = { name: 'x_tool', inputSchema: '{"type":"object"}', effect: Effect.SIDE_EFFECT, timeoutMs: 5_000 };
const call = (t: WorkerApp, id: string, args = '{"n":1}', options = {}) => t.dispatch.dispatch({ sessionId: 's1', calls: [{ id, name: 'x_tool', arguments: args }] }, options).then((r) => r.results[0]!);
const listed = async (t: WorkerApp, name: string) => (await t.registry.listTools({})).tools.some((x) => x.name === name);

describe.each([
  ['every plugin (Redis store too)', false],
  ['the executors plugin alone', true],
])('workers across replicas sharing Redis, with %s', (_assembly, only) => {
  let redis: TestRedis;
  let a: WorkerApp;
  let b: WorkerApp;
  beforeAll(async () => {
    redis = await startRedis({ own: true });
  });
  afterAll(() => redis.close());
  beforeEach(async () => {
    const options = { advertiseIntervalMs: 200, routeTtlMs: 1_000 };
    a = await startWorkerApp(options, { redisUrl: redis.url, only });
    b = await startWorkerApp(options, { redisUrl: redis.url, only });
  });
  afterEach(async () => {
    await a.close();
    await b.close();
    const flush = new Redis(redis.url);
    await flush.flushall();
    flush.disconnect();
  });

  it('runs a call that arrives at one replica on a worker connected to the other', async () => {
    const worker = await a.worker({ id: 'on-a', tools: [tool], answer: echoAnswer('on-a') });
    await eventually(() => listed(b, 'x_tool'), 5_000, 'the tool on replica b');
    const result = await call(b, 'c1');
    expect(result.isError).toBe(false);
    expect(JSON.parse(result.output)).toEqual({ worker: 'on-a', args: { n: 1 } });
    expect(worker.assignments[0]!.call?.id).toBe('c1');
    expect(worker.assignments[0]!.sessionId).toBe('s1');
  });

  it('carries a worker error back as a TOOL_ERROR', async () => {
    await a.worker({ id: 'on-a', tools: [tool], answer: () => ({ output: 'refused', isError: true }) });
    await eventually(() => listed(b, 'x_tool'), 5_000, 'the tool on replica b');
    const result = await call(b, 'c1');
    expect(result.error?.kind).toBe(ErrorKind.TOOL_ERROR);
    expect(result.error?.message).toBe('tool "x_tool" reported an error: refused');
  });

  it('carries a cancel to the worker on the other replica', async () => {
    const worker = await a.worker({ id: 'on-a', tools: [tool] });
    await eventually(() => listed(b, 'x_tool'), 5_000, 'the tool on replica b');
    const controller = new AbortController();
    const pending = call(b, 'c1', '{"n":1}', { signal: controller.signal });
    await eventually(() => worker.assignments.length === 1, 5_000, 'the assignment');
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: 1 });
    await eventually(() => worker.cancels.length === 1, 5_000, 'the cancel');
    expect(worker.cancels[0]).toBe(worker.assignments[0]!.assignmentId);
  });

  it('reports a worker dying on the other replica as a DURING failure', async () => {
    let worker!: TestWorker;
    worker = await a.worker({
      id: 'on-a',
      tools: [tool],
      answer: () => {
        setImmediate(() => worker.disconnect());
        return undefined;
      },
    });
    await eventually(() => listed(b, 'x_tool'), 5_000, 'the tool on replica b');
    const result = await call(b, 'c1');
    expect(result.error?.kind).toBe(ErrorKind.UNAVAILABLE);
    expect(result.error?.message).toBe('worker "on-a" hosting "x_tool" disconnected while running the call');
    expect(result.error?.recoverable).toBe(false);
    expect(JSON.parse(result.output)).toMatchObject({ recoverable: false, suggestion: expect.stringContaining('verify its effect (for example by reading the current state) before anything else. The same call again is answered OUTCOME_UNKNOWN') });
    expect(result.attempts).toBe(1);
    expect((await call(b, 'c2')).error?.kind).toBe(ErrorKind.OUTCOME_UNKNOWN);
  });

  it('fails BEFORE when the only worker, on the other replica, has left', async () => {
    const worker = await a.worker({ id: 'on-a', tools: [tool], answer: echoAnswer('on-a') });
    await eventually(() => listed(b, 'x_tool'), 5_000, 'the tool on replica b');
    await worker.close();
    const result = await call(b, 'c1');
    expect(result.error?.kind).toBe(ErrorKind.UNAVAILABLE);
    expect(result.error?.message).toBe('no worker is connected for tool "x_tool"; the call was not executed');
    expect(result.attempts).toBe(2);
  });

  it('learns tools registered before it started, and prefers a worker connected to itself', async () => {
    const onA = await a.worker({ id: 'on-a', tools: [tool], answer: echoAnswer('on-a') });
    const c = await startWorkerApp({}, { redisUrl: redis.url, only });
    try {
      await eventually(() => listed(c, 'x_tool'), 5_000, 'the tool on a replica started later');
      const result = (await c.dispatch.dispatch({ sessionId: 's9', calls: [{ id: 'c9', name: 'x_tool', arguments: '{}' }] })).results[0]!;
      expect(JSON.parse(result.output).worker).toBe('on-a');
      const onB = await b.worker({ id: 'on-b', tools: [tool], answer: echoAnswer('on-b') });
      for (let i = 0; i < 4; i++) await call(b, `c${i}`, `{"n":${i}}`);
      expect(onB.assignments).toHaveLength(4);
      expect(onA.assignments).toHaveLength(1);
    } finally {
      await c.close();
    }
  });
});
