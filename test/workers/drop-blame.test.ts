// A worker that drops its stream just after a large assignment was blamed at once for it (the call
// failed for good, "most likely larger than it can receive") and its id was kept to 4 MiB for
// ever, every live worker of that id included. An honest worker killed (OOM, a node lost) with a
// large call in flight, or stopping gracefully (a half-close, as examples/python/worker.py does on
// SIGTERM), was blamed so, and one restart capped a whole deployment sharing the id. Now a
// half-close is never suspected, blame needs two drops of the id within 10 minutes (the first
// call is told "disconnected", as before), and the cap holds only for workers connecting after it.
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { startApp, type TestDispatch } from '../helpers/servers';
import { eventually, readyPollsKeepBreakerClosed } from './worker-harness';

jest.setTimeout(40_000);

const MiB = 1024 * 1024;
const LIMITS = `limits: { max_argument_bytes: ${6 * MiB}, max_message_bytes: ${64 * MiB} }\n`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let t: TestDispatch;
let children: ChildProcess[] = [];
beforeEach(async () => {
  t = await startApp(LIMITS + readyPollsKeepBreakerClosed());
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

/**
 * Starts a worker process of id `id` (channel and hello 64 MiB) answering as `pod`, exiting a turn
 * of its event loop after its stream ends (its library's reset sent first; see crash-not-blamed);
 * resolves once it took a small call (none other takes a call meanwhile).
 */
async function pod(id: string, name: string, receives = 64 * MiB) {
  const child = spawn(process.execPath, [path.join(__dirname, 'fixtures/large-worker.js'), t.address, id, name, String(receives), String(64 * MiB), '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  // Each try its own call: a read-only answer is memoized, and the same one repeated is a loop.
  let tries = 0;
  await eventually(async () => (await call(`ready-${name}-${++tries}`, `ready ${tries}`)).output.startsWith(`{"pod":"${name}"`), 10_000, `pod ${name} to take calls`);
  return { child, assigned: (chars: number) => out.includes(`ASSIGNED ${chars}\n`) };
}

const HELD = `hold${'a'.repeat(5_000_000)}`;

test('an honest worker SIGKILLed with a large call in flight is not blamed: the call is told "disconnected", and its id, back, takes large calls', async () => {
  const first = await pod('ocr', 'a');
  const big = call('s1', HELD, 'w_pay');
  await eventually(() => first.assigned(HELD.length), 10_000, 'the large call to reach the worker');
  await sleep(1_000);
  first.child.kill('SIGKILL');
  const result = await big;
  expect(result.error?.message).toBe('worker "ocr" hosting "w_pay" disconnected while running the call');
  expect(result.attempts).toBe(1);

  await pod('ocr', 'b');
  expect(await call('s2', 'a'.repeat(5_000_000))).toMatchObject({ isError: false, output: '{"pod":"b","chars":5000000}' });
});

test('a worker half-closing its stream (a graceful stop) with a large call in flight is never suspected, however often', async () => {
  for (const name of ['a', 'b']) {
    const stopping = await pod('py', name);
    const big = call(`s-${name}`, HELD, 'w_pay');
    await eventually(() => stopping.assigned(HELD.length), 10_000, 'the large call to reach the worker');
    stopping.child.kill('SIGTERM');
    const result = await big;
    expect(result.error?.message).toBe('worker "py" hosting "w_pay" disconnected while running the call');
    expect(result.attempts).toBe(1);
  }
  await pod('py', 'c');
  expect(await call('s-c', 'a'.repeat(5_000_000))).toMatchObject({ isError: false, output: '{"pod":"c","chars":5000000}' });
});

test('a worker id blamed (two drops) caps no live worker of that id: another pod already connected keeps taking large calls', async () => {
  // Pods a and c overstate (their channels receive 4 MiB): each refuses the large call, resetting its stream.
  await pod('ocr', 'a', 4 * MiB);
  expect((await call('s1', HELD, 'w_pay')).error?.message).toBe('worker "ocr" hosting "w_pay" disconnected while running the call');
  const b = await pod('ocr', 'b');
  // Pod b holds a call: the next worker connecting, less busy, is sent the next large call.
  const busy = call('busy', 'hold b');
  await eventually(() => b.assigned(6), 10_000, 'the held call to reach pod b');

  await pod('ocr', 'c', 4 * MiB);
  expect((await call('s2', HELD, 'w_pay')).error?.message).toMatch(/^worker "ocr" hosting "w_pay" dropped its stream just after it was sent this call's assignment of 50001\d\d bytes, the second time within 10 minutes/);

  expect(await call('s3', 'a'.repeat(5_000_000))).toMatchObject({ isError: false, output: '{"pod":"b","chars":5000000}' });
  void busy;
});
