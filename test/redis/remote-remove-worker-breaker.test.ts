import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { guardsPlugin } from '../../src/app/plugins/guards-plugin';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startWorkerApp, type WorkerApp } from '../workers/worker-app';
import { eventually, type Answer } from '../workers/worker-harness';

// A worker tool removed on another replica takes its breaker with it here too. Without the Redis
// store (the executors and guards plugins), only the worker specs carry the removal: the spec sync
// applies it (ToolRegistry.applyRemote), which told nobody, so replica b kept the tool's open
// breaker and refused the tool hosted again BREAKER_OPEN. Two apps on a private redis-server, real
// Work streams.

jest.setTimeout(30_000);

let redis: TestRedis;
let a: WorkerApp;
let b: WorkerApp;
let failing = true;
// While failing, calls are not answered: each times out, a failure the breaker counts (an
// is_error answer is the tool's own answer, which it does not).
const answer: Answer = () => (failing ? undefined : { output: 'fine' });
const tool = { name: 'wtool', inputSchema: '{"type":"object"}', effect: Effect.READ_ONLY, timeoutMs: 300, retry: { maxAttempts: 1 } };

beforeAll(async () => {
  redis = await startRedis({ own: true });
  [a, b] = await Promise.all([0, 1].map(() => startWorkerApp({}, { redisUrl: redis.url, only: true, plugins: [guardsPlugin] })));
});
afterAll(async () => {
  await Promise.all([a, b].map((app) => app?.close()));
  await redis?.close();
});

const namesOn = async (app: WorkerApp) => (await app.registry.listTools({})).tools.map((t) => t.name);
let n = 0;
const callOn = async (app: WorkerApp) => (await app.dispatch.dispatch({ sessionId: `s${++n}`, calls: [{ id: 'c', name: 'wtool', arguments: JSON.stringify({ n }) }] })).results[0]!;
const kindOf = (result: Awaited<ReturnType<typeof callOn>>) => (result.error ? ErrorKind[result.error.kind] : 'ok');

test('a worker tool removed on a and hosted there again is served on b with a closed breaker', async () => {
  await a.worker({ id: 'w1', tools: [tool], answer });
  await eventually(async () => (await namesOn(b)).includes('wtool'), 5_000, 'the tool on replica b');
  for (let i = 0; i < 5; i++) expect(kindOf(await callOn(b))).toBe('TIMEOUT');
  expect(kindOf(await callOn(b))).toBe('BREAKER_OPEN');

  expect((await a.registry.removeTool({ name: 'wtool' })).removed).toBe(true);
  await eventually(async () => (await namesOn(b)).length === 0, 5_000, 'the removal on replica b');
  failing = false;
  await a.worker({ id: 'w2', tools: [tool], answer });
  await eventually(async () => (await namesOn(b)).includes('wtool'), 5_000, 'the tool hosted again, on replica b');
  const result = await callOn(b);
  expect(kindOf(result)).toBe('ok');
  expect(result.output).toBe('fine');
});
