// examples/typescript/worker.ts and the assignments dispatch cancels: no completion for one, and
// nothing kept of it afterwards (its set of cancelled ids grew with every cancel that crossed a
// completion, for as long as a stream lived; examples/python/worker.py was bounded the same way).
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { Assignments, runWorker, type HostedTool } from '../../examples/typescript/worker';
import { startApp } from '../helpers/servers';
import { eventually } from './worker-harness';

test('the ids it holds stay within the assignments still open, whatever the cancels', () => {
  const a = new Assignments();
  // Answers gathered and compared once: 200,000 expect calls took ~17 s of the suite.
  const wrong: string[] = [];
  for (let i = 0; i < 100_000; i++) {
    a.start(String(i));
    if (a.finish(String(i)) !== false) wrong.push(`finish ${i}`);
    // A cancel that crossed the completion.
    if (a.cancel(String(i)) !== false) wrong.push(`cancel ${i}`);
  }
  expect(wrong).toEqual([]);
  expect(a.sizes()).toEqual({ open: 0, cancelled: 0 });
  a.start('x');
  expect(a.cancel('x')).toBe(true);
  expect(a.sizes()).toEqual({ open: 1, cancelled: 1 });
  expect(a.finish('x')).toBe(true);
  expect(a.cancel('never started')).toBe(false);
  expect(a.sizes()).toEqual({ open: 0, cancelled: 0 });
});

test('an assignment cancelled while it runs sends no completion, and the worker holds nothing of it', async () => {
  const t = await startApp(readFileSync(path.join(__dirname, '../../examples/tools.yaml'), 'utf8'));
  let release: () => void = () => undefined;
  let started = false;
  const slow: HostedTool = {
    spec: { name: 'ts_slow', inputSchema: '{"type":"object"}', effect: Effect.READ_ONLY, timeoutMs: 10_000 },
    run: () =>
      new Promise<string>((resolve) => {
        started = true;
        release = () => resolve('done');
      }),
  };
  const log: string[] = [];
  const worker = runWorker({ address: t.address, workerId: 'ts-cancel', heartbeatMs: 200, tools: { ts_slow: slow }, log: (line) => log.push(line) });
  try {
    await eventually(async () => (await t.registry.listTools({})).tools.some((x) => x.name === 'ts_slow'), 10_000, 'the worker');
    const abort = new AbortController();
    const call = t.dispatch.dispatch({ sessionId: 'c', calls: [{ id: 'slow', name: 'ts_slow', arguments: '{}' }] }, { signal: abort.signal }).catch((error: Error) => error);
    await eventually(async () => started, 10_000, 'the slow tool to start');
    expect(worker.held()).toEqual({ open: 1, cancelled: 0 });
    abort.abort();
    expect(await call).toBeInstanceOf(Error);
    await eventually(async () => log.some((line) => /^cancelled \S+$/.test(line)), 10_000, 'the cancel to reach the worker');
    expect(worker.held()).toEqual({ open: 1, cancelled: 1 });
    release();
    await eventually(async () => worker.held().open === 0, 10_000, 'the slow tool to end');
    expect(worker.held()).toEqual({ open: 0, cancelled: 0 });
    expect(log.filter((line) => line.startsWith('completed'))).toEqual([]);
  } finally {
    worker.stop();
    await worker.done;
    await t.close();
  }
});
