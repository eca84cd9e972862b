// A worker id was blamed for overstating its receive limit at its second stream reset within 10
// minutes right after a large assignment, and an honest worker killed twice so (SIGKILL, an OOM
// kill, each with a large call just sent) was blamed too: Node resets the streams of a connection
// that ends, so a crash looked like a library refusing the message. Now only a reset while the
// worker's connection (its HTTP/2 session) lives counts: a library refusing a message resets its
// stream and keeps the connection, a killed process's connection ends under the stream. A worker
// whose library refuses and which then closes its connection at once (exits, or, as
// examples/python/worker.py does, closes its channel) is still blamed: its reset came first.
// But one that exits in the very tick its library refuses (process.exit in its call's 'status' or
// 'error' handler) never sends that reset: its connection ends as a killed one's does (measured:
// ECONNRESET, the stream's rstCode 2 and its session destroyed, alike for a SIGKILL while the
// assignment arrives; a reset sent is rstCode 8 with the session up), and it is not blamed. That is
// the intended outcome, the price of not blaming crashes: its calls are told "disconnected".
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { startApp, type TestDispatch } from '../helpers/servers';
import { eventually, readyPollsKeepBreakerClosed } from './worker-harness';

jest.setTimeout(20_000);

const MiB = 1024 * 1024;
const LIMITS = `limits: { max_argument_bytes: ${6 * MiB}, max_message_bytes: ${64 * MiB} }\n`;

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
 * Starts a worker process of id `id` (its hello says 64 MiB; its channel receives `receives`, and it
 * exits once its stream ends) answering as `pod`; resolves once it took a small call.
 */
async function pod(id: string, name: string, receives = 64 * MiB) {
  const child = spawn(process.execPath, [path.join(__dirname, 'fixtures/large-worker.js'), t.address, id, name, String(receives), String(64 * MiB)], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  let tries = 0;
  await eventually(async () => (await call(`ready-${name}-${++tries}`, `ready ${tries}`)).output.startsWith(`{"pod":"${name}"`), 10_000, `pod ${name} to take calls`);
  return { child, assigned: (chars: number) => out.includes(`ASSIGNED ${chars}\n`) };
}

// Other arguments each time: the second worker to stop under the same arguments would keep them
// out (poison-call.test.ts), which is not what this file looks at.
const HELD = (i: number) => `hold${i}${'a'.repeat(4_999_999)}`;
const DISCONNECTED = 'worker "ocr" hosting "w_pay" disconnected while running the call';

test('an honest worker SIGKILLed twice within 10 minutes, each time just as a large call reached it, is not blamed: its id, back, takes large calls', async () => {
  for (const [i, name] of ['a', 'b'].entries()) {
    const p = await pod('ocr', name);
    const big = call(`s${i}`, HELD(i), 'w_pay');
    await eventually(() => p.assigned(HELD(i).length), 10_000, 'the large call to reach the worker');
    // At once: well within RECEIVE_FAILURE_MS of the transport taking the assignment.
    p.child.kill('SIGKILL');
    const result = await big;
    expect(result.error?.message).toBe(DISCONNECTED);
    expect(result.attempts).toBe(1);
  }
  await pod('ocr', 'c');
  expect(await call('s2', 'a'.repeat(5_000_000))).toMatchObject({ isError: false, output: '{"pod":"c","chars":5000000}' });
});

test('a worker overstating its receive limit that exits in the same tick as its library refuses (its reset never sent) is not blamed, however often: its calls are told "disconnected"', async () => {
  for (const [i, name] of ['a', 'b'].entries()) {
    // Its channel receives 4 MiB, its hello says 64: grpc-js refuses the assignment, and the fixture exits on the call's status at once.
    const p = await pod('ocr', name, 4 * MiB);
    const result = await call(`liar${i}`, HELD(i), 'w_pay');
    expect(result.error?.message).toBe(DISCONNECTED);
    expect(result.attempts).toBe(1);
    await new Promise<void>((resolve) => (p.child.exitCode !== null ? resolve() : p.child.once('exit', () => resolve())));
  }
  // Not capped: a worker of that id receiving what its hello says takes large calls.
  await pod('ocr', 'c');
  expect(await call('s2', 'a'.repeat(5_000_000))).toMatchObject({ isError: false, output: '{"pod":"c","chars":5000000}' });
});
