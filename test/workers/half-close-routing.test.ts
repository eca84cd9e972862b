// A worker that half-closes its stream (examples/python/worker.py on SIGTERM) stayed in routing for
// the 250 ms dispatch waits for a reset after it: being idle, it was the least loaded and was
// picked. It still reads and runs what it receives but can send no completion, so a side-effecting
// call ran and was told "may or may not have run", and a read-only one ran twice. Now a half-closed
// link takes no new call at once; the calls it already held are failed after the wait, as before.
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { startApp, type TestDispatch } from '../helpers/servers';
import { eventually, readyPollsKeepBreakerClosed } from './worker-harness';

jest.setTimeout(40_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let t: TestDispatch;
let children: ChildProcess[] = [];
beforeEach(async () => {
  t = await startApp(readyPollsKeepBreakerClosed());
  children = [];
});
afterEach(async () => {
  for (const child of children) child.kill('SIGKILL');
  await t.close();
});

const call = async (session: string, text: string, name = 'w_count') => {
  const { results } = await t.dispatch.dispatch({ sessionId: session, calls: [{ id: 'c', name, arguments: JSON.stringify({ text }) }] });
  return results[0]!;
};

/** Starts a worker process (test/workers/fixtures/large-worker.js) answering as `name`; resolves once it took a small call. */
async function pod(name: string) {
  const child = spawn(process.execPath, [path.join(__dirname, 'fixtures/large-worker.js'), t.address, 'w', name, String(4 * 1024 * 1024), '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  let tries = 0;
  await eventually(async () => (await call(`ready-${name}-${++tries}`, `ready ${tries}`)).output.startsWith(`{"pod":"${name}"`), 10_000, `pod ${name} to take calls`);
  return { child, assigned: (chars: number) => out.includes(`ASSIGNED ${chars}\n`) };
}

test('a half-closed idle worker gets no new call while another worker of the tool is connected', async () => {
  const busy = await pod('a');
  const stopping = await pod('b');
  // Pod a holds a call (never answered): the idle pod b is the least loaded, so it was picked first.
  const held = call('held', 'hold', 'w_pay');
  await eventually(() => busy.assigned(4), 5_000, 'pod a to hold a call');
  stopping.child.kill('SIGTERM');
  // Within the 250 ms dispatch waits for a reset after the half-close.
  await sleep(60);
  const [pay, count] = await Promise.all([call('pay', 'x'.repeat(101), 'w_pay'), call('count', 'y'.repeat(102))]);
  expect(pay).toMatchObject({ isError: false, output: '{"pod":"a","chars":101}', attempts: 1 });
  expect(count).toMatchObject({ isError: false, output: '{"pod":"a","chars":102}', attempts: 1 });
  expect(stopping.assigned(101)).toBe(false);
  expect(stopping.assigned(102)).toBe(false);
  busy.child.kill('SIGKILL');
  await held;
});
