// A worker whose hello OVERSTATED its receive limit (said 64 MiB; its channel receives gRPC's
// default 4 MiB) was sent a 5 MB assignment: its own gRPC library refused it (RESOURCE_EXHAUSTED on
// the worker's side) and reset the stream. The call was told "disconnected", recoverable, so it was
// retried, and the same worker, reconnected with the same hello, was sent it again, for ever. Now
// the first such drop is still told "disconnected" (a crash looks the same), but the second of that
// worker id within 10 minutes fails its call for good, saying the worker dropped its stream after an
// assignment of that size and should state a true max_receive_message_bytes (DURING: the worker
// may have run it), and a worker of that id connecting again with that hello is sent no assignment
// past 4 MiB for 10 minutes; calls in flight beside it stay recoverable, as before.
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { createWorkerClient } from '../../src/client';
import { startApp, type TestDispatch } from '../helpers/servers';
import { startCounter } from './counting-worker';
import { eventually, readyPollsKeepBreakerClosed } from './worker-harness';

jest.setTimeout(30_000);

const MiB = 1024 * 1024;
const LIMITS = `limits: { max_argument_bytes: ${6 * MiB}, max_message_bytes: ${64 * MiB} }\n`;
const tool = (name: string, effect = Effect.READ_ONLY) => ({ name, effect, description: 'counts characters', inputSchema: '{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}' });

/**
 * A worker whose channel receives `receives` bytes and whose hello says `says`: it answers each
 * assignment with its argument's length, but holds those whose text starts with "hold".
 */
function startWorker(address: string, id: string, receives: number, says: number, tools = [tool('w_count')]) {
  const client = createWorkerClient(address, undefined, { 'grpc.max_receive_message_length': receives });
  return startCounter(client, id, { tools, maxReceive: says, hold: (text) => text.startsWith('hold') });
}

let t: TestDispatch;
let stops: (() => void)[] = [];
beforeEach(async () => {
  t = await startApp(LIMITS + readyPollsKeepBreakerClosed());
  stops = [];
});
afterEach(async () => {
  for (const stop of stops) stop();
  await t.close();
});

const worker = async (id: string, receives: number, says: number, tools = [tool('w_count')]) => {
  const w = startWorker(t.address, id, receives, says, tools);
  stops.push(w.stop);
  // Its tools stay registered once it leaves: a worker reconnecting is awaited by its calls.
  await eventually(async () => {
    const names = (await t.registry.listTools({})).tools.map((x) => x.name);
    return tools.every((x) => names.includes(x.name));
  }, 5_000, `worker ${id} to register`);
  return w;
};
/** Starts a worker of an id that was connected before (its tools stay registered), and resolves once it takes a call. */
let reconnects = 0;
const reconnect = async (id: string, receives: number, says: number, tools = [tool('w_count')]) => {
  const w = await worker(id, receives, says, tools);
  const text = `r${++reconnects}`;
  await eventually(async () => (await call(text, text)).output === `{"worker":"${id}","chars":${text.length}}`, 5_000, `worker ${id} to take calls`);
  return w;
};
const call = async (session: string, text: string, name = 'w_count') => {
  const { results } = await t.dispatch.dispatch({ sessionId: session, calls: [{ id: `c-${text.length}`, name, arguments: JSON.stringify({ text }) }] });
  return results[0]!;
};
const DROPPED =
  /^worker "liar" hosting "w_count" dropped its stream just after it was sent this call's assignment of 50001\d\d bytes, the second time within 10 minutes a worker of this id did so after a large assignment, so it is most likely larger than it can receive \(its hello said max_receive_message_bytes 67108864\); the call may or may not have run\. The worker should state a true max_receive_message_bytes in its hello \(what its channel's grpc\.max_receive_message_length allows\); for 10 minutes, a worker of this id that connects again stating 67108864 is sent no assignment over 4194304 bytes \(gRPC's default receive limit\); one stating more or less is believed$/;

/** What the retry of a read-only call whose worker went away is told when it finds no worker (the first attempt was sent: not "not executed"). */
const GONE = 'no worker is connected any longer for tool "w_count" to try the call again; an earlier attempt was sent to a worker (the call may or may not have run)';

/** The first drop of a liar's stream after a large call: told "disconnected", as a crash is (read-only: retried, and the retry finds no worker). */
async function firstDrop(liar: ReturnType<typeof startWorker>, session: string, name = 'w_count') {
  const first = await call(session, 'a'.repeat(5_000_000), name);
  expect(first.error?.message).toBe(name === 'w_count' ? GONE : `worker "liar" hosting "${name}" disconnected while running the call`);
  await eventually(() => liar.ended() !== undefined, 5_000, 'the worker stream to end');
}

test('the call whose assignment a worker could not receive, the second time, fails for good, saying so; that worker id is then sent no such assignment', async () => {
  await firstDrop(await worker('liar', 4 * MiB, 64 * MiB), 's0');
  const liar = await reconnect('liar', 4 * MiB, 64 * MiB);
  const big = await call('s', 'a'.repeat(5_000_000));
  expect(big.isError).toBe(true);
  expect(big.error?.kind).toBe(ErrorKind.UNAVAILABLE);
  expect(big.error?.message).toMatch(DROPPED);
  expect(big.error?.message).not.toContain('not executed');
  expect(big.error?.recoverable).toBe(false);
  // Not retried: the retry was told "no worker is connected", or sent it to the same kind of worker.
  expect(big.attempts).toBe(1);
  await eventually(() => liar.ended() !== undefined, 5_000, 'the worker stream to end');
  expect(liar.assignments).toHaveLength(1);

  // Reconnected with the same hello: the large call is refused before anything is sent.
  const again = await worker('liar', 4 * MiB, 64 * MiB);
  await eventually(async () => (await call('s2', 'b'.repeat(3))).output === '{"worker":"liar","chars":3}', 5_000, 'the worker to take calls again');
  const refused = await call('s', 'a'.repeat(5_000_000));
  expect(refused.error?.kind).toBe(ErrorKind.INVALID_ARGUMENTS);
  expect(refused.error?.message).toMatch(
    /over the 4194304 bytes \(4 MiB\) that worker "liar" hosting "w_count" is kept to until \d{4}-\d\d-\d\dT[\d:.]+Z \(workers of its id twice dropped their streams just after large assignments, the last of 50001\d\d bytes, though its hello says max_receive_message_bytes 67108864\); it was not sent and the tool was not executed\. To allow it, have the worker state a true max_receive_message_bytes in its hello \(what its channel's grpc\.max_receive_message_length allows, raised; a hello stating more than 67108864 is believed\), or call again after that time, or keep limits\.max_argument_bytes below it$/,
  );
  expect(again.assignments.map((a) => a.call!.arguments.length)).toEqual([14]);
  expect(again.ended()).toBeUndefined();

  // A worker that can take it is picked over it.
  await worker('honest', 64 * MiB, 64 * MiB);
  await eventually(async () => (await call('s3', 'a'.repeat(5_000_000))).output === '{"worker":"honest","chars":5000000}', 5_000, 'the honest worker to take the large call');
  expect(again.ended()).toBeUndefined();
});

test('a side-effecting call that dropped the stream is not said to be unexecuted; a call in flight beside it stays recoverable', async () => {
  const tools = [tool('w_count'), tool('w_pay', Effect.SIDE_EFFECT)];
  await firstDrop(await worker('liar', 4 * MiB, 64 * MiB, tools), 'p0', 'w_pay');
  const liar = await reconnect('liar', 4 * MiB, 64 * MiB, tools);
  const held = t.dispatch.dispatch({ sessionId: 'h', calls: [{ id: 'held', name: 'w_count', arguments: JSON.stringify({ text: 'hold on' }) }] });
  await eventually(() => liar.assignments.length === 2, 5_000, 'the held call to reach the worker');
  const big = await call('p', 'a'.repeat(5_000_000), 'w_pay');
  expect(big.error?.kind).toBe(ErrorKind.UNAVAILABLE);
  expect(big.error?.message).toMatch(/^worker "liar" hosting "w_pay" dropped its stream just after it was sent this call's assignment of 50001\d\d bytes, the second time within 10 minutes a worker of this id did so after a large assignment, so it is most likely larger than it can receive/);
  expect(big.error?.recoverable).toBe(false);
  expect(JSON.parse(big.output)).toMatchObject({ recoverable: false, suggestion: expect.stringMatching(/^The call may or may not have run: if it changes anything, verify its effect before calling again\./) });
  // Told "disconnected", recoverable, as before: retried, and the retry finds no worker.
  const other = (await held).results[0]!;
  expect(other.attempts).toBe(2);
  expect(other.error?.message).toBe(GONE);
  expect(other.error?.recoverable).toBe(true);
});

test('a worker that received a large assignment and ends its stream later is not blamed for it; a lower hello is believed anew', async () => {
  const honest = await worker('honest', 64 * MiB, 64 * MiB);
  const held = call('h', `hold${'a'.repeat(5_000_000)}`);
  await eventually(() => honest.assignments.length === 1, 5_000, 'the large call to reach the worker');
  // Past RECEIVE_FAILURE_MS: the worker had received it, and crashes for its own reasons.
  await new Promise((r) => setTimeout(r, 3_500));
  honest.stop();
  const result = await held;
  expect(result.attempts).toBe(2);
  expect(result.error?.message).toBe(GONE);

  // The same id, sent large calls again.
  const back = await worker('honest', 64 * MiB, 64 * MiB);
  await eventually(async () => (await call('s', 'a'.repeat(5_000_000))).output === '{"worker":"honest","chars":5000000}', 5_000, 'the worker to take the large call');
  back.stop();

  // One blamed (two drops), then stating a lower limit: its own statement is kept to.
  await firstDrop(await reconnect('liar', 4 * MiB, 64 * MiB), 'd0');
  await reconnect('liar', 4 * MiB, 64 * MiB);
  expect((await call('d', 'a'.repeat(5_000_000))).error?.message).toMatch(/dropped its stream just after/);
  const fixed = await worker('liar', 5.5 * MiB, 5.5 * MiB);
  await eventually(async () => (await call('f', 'a'.repeat(5_000_000))).output === '{"worker":"liar","chars":5000000}', 5_000, 'the corrected worker to take the large call');
  expect(fixed.ended()).toBeUndefined();
});

test('a worker id blamed, connecting again with a hello stating more than it was blamed under, is believed', async () => {
  await firstDrop(await worker('liar', 4 * MiB, 32 * MiB), 'm0');
  await reconnect('liar', 4 * MiB, 32 * MiB);
  expect((await call('m1', 'a'.repeat(5_000_000))).error?.message).toMatch(/dropped its stream just after/);
  const raised = await worker('liar', 64 * MiB, 64 * MiB);
  await eventually(async () => (await call('m2', 'a'.repeat(5_000_000))).output === '{"worker":"liar","chars":5000000}', 5_000, 'the raised worker to take the large call');
  expect(raised.ended()).toBeUndefined();
});
