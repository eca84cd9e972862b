import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startPausedWorker } from './paused-worker';
import { startWorkerApp, type WorkerApp } from './worker-app';
import { echoAnswer, eventually, type Answer } from './worker-harness';

// A worker that heartbeats but reads nothing used to have every assignment written to it buffered
// in dispatch without bound (the write ignored backpressure, and a timed-out assignment made the
// worker look idle again). Its unsent bytes are now counted: holding an eighth of
// worker.maxUnsentBytes unread, other workers are picked first; holding all of it unread for 2 s,
// the worker is ended.
const MAX_UNSENT = 1024 * 1024;
const sink = { name: 'w_sink', inputSchema: '{"type":"object"}', effect: Effect.READ_ONLY, timeoutMs: 20_000, concurrencySafe: true, retry: { maxAttempts: 1 } };
const big = (i: number) => JSON.stringify({ i, pad: 'z'.repeat(200 * 1024) });

const delayed = (ms: number): Answer => (a) => new Promise((r) => setTimeout(() => r(echoAnswer('reader')(a)), ms));

describe('a worker that reads none of its assignments', () => {
  let t: WorkerApp;
  let deaf: ReturnType<typeof startPausedWorker> | undefined;
  beforeEach(async () => {
    t = await startWorkerApp({ maxUnsentBytes: MAX_UNSENT });
  });
  afterEach(async () => {
    deaf?.close();
    await t.close();
  });
  const hosted = async () => (await t.registry.listTools({})).tools.some((tool) => tool.name === 'w_sink');
  const call = (i: number) => t.dispatch.dispatch({ sessionId: `s${i}`, calls: [{ id: `c${i}`, name: 'w_sink', arguments: big(i) }] }).then((r) => r.results[0]!);

  it('is ended RESOURCE_EXHAUSTED once worker.maxUnsentBytes wait for it unread, its calls failing', async () => {
    deaf = startPausedWorker(t.address, 'deaf', sink);
    await eventually(hosted, 5_000, 'the deaf worker registered');
    // 200 KiB each, one every 100 ms: past 1 MiB unread for 2 s, the next pick ends the worker.
    const calls = [];
    for (let i = 0; i < 50 && !(await Promise.race([calls.at(-1), new Promise((r) => setTimeout(r, 100))])); i++) calls.push(call(i));
    const results = await Promise.all(calls);
    const unread = results.filter((r) => /^worker "deaf" hosting "w_sink" was disconnected because it does not read its assignments/.test(r.error?.message ?? ''));
    expect(unread.length).toBeGreaterThanOrEqual(6);
    expect(results.filter((r) => !r.error)).toHaveLength(0);
  }, 30_000);

  it('is picked after the workers that read theirs, once it has left some unread for a while', async () => {
    deaf = startPausedWorker(t.address, 'deaf', sink);
    await eventually(hosted, 5_000, 'the deaf worker registered');
    const reader = await t.worker({ id: 'reader', tools: [sink], answer: delayed(2_000) });
    // One every 30 ms: by least outstanding alone, the deaf worker would hold half of them (until their timeout).
    const calls = [];
    for (let i = 0; i < 40; i++) {
      calls.push(call(i));
      await new Promise((r) => setTimeout(r, 30));
    }
    deaf.close();
    const results = await Promise.all(calls);
    expect(reader.assignments.length).toBeGreaterThanOrEqual(30);
    expect(results.filter((r) => !r.isError)).toHaveLength(reader.assignments.length);
  }, 30_000);
});
