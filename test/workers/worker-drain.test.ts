import { create } from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { WorkerMessageSchema } from '../../gen/dispatch/v1/worker_pb';
import { createWorkerClient } from '../../src/client';
import { startWorkerApp, type WorkerApp } from './worker-app';

// A tool author's probe: a worker could not stop gracefully. Its only way to take no new call was
// to half-close its stream, which failed the calls it still held ("disconnected" 250 ms later; a
// side-effecting one's outcome unknown) though it went on running them, on every rolling update of
// a worker fleet (the examples did so on SIGTERM). A worker now says Drain: it gets no new call,
// answers those it holds, then half-closes. Real Work streams.

const SCHEMA = JSON.stringify({ type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] });
const tool = { name: 'w_pay', description: 'pays', inputSchema: SCHEMA, effect: Effect.SIDE_EFFECT, timeoutMs: 5_000 };

let t: WorkerApp;
let drains = 0;
beforeEach(async () => {
  drains = 0;
  const info = (message: string) => void (message === 'worker draining' && drains++);
  t = await startWorkerApp({}, { logger: { debug() {}, info, warn() {}, error() {} } });
});
afterEach(() => t.close());

const pay = (n: number) => t.dispatch.dispatch({ sessionId: `s${n}`, calls: [{ id: `c${n}`, name: 'w_pay', arguments: JSON.stringify({ n }) }] }).then((r) => r.results[0]!);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Waits for what a loaded machine may delay past a fixed sleep (a call's arrival, a drain's). */
async function until(what: string, done: () => boolean): Promise<void> {
  for (const end = Date.now() + 5_000; !done(); await sleep(5)) if (Date.now() > end) throw new Error(`${what} did not happen in 5 s`);
}

test('a draining worker answers the call it holds, gets no new one, and its half-close after ends the stream OK', async () => {
  const worker = await t.worker({ id: 'w1', tools: [tool], answer: async (a) => (await sleep(400), { output: `paid ${a.call?.arguments}` }) });
  const held = pay(1);
  await until('the call held', () => worker.assignments.length === 1);
  worker.drain();
  await until('the drain', () => drains === 1);
  const refused = await pay(2);
  expect(refused.error?.kind).toBe(ErrorKind.UNAVAILABLE);
  expect(JSON.parse(refused.output)).toMatchObject({ recoverable: true });
  expect(await held).toMatchObject({ isError: false, output: 'paid {"n":1}' });
  expect(worker.assignments.map((a) => a.call?.arguments)).toEqual(['{"n":1}']);
  await worker.close();
  expect((await worker.ended).code).toBe(grpc.status.OK);
});

test('a draining worker beside another: new calls go to the other, the held one is answered by the first', async () => {
  const first = await t.worker({ id: 'w1', tools: [tool], answer: async () => (await sleep(400), { output: 'first' }) });
  const held = pay(1);
  await until('the call held', () => first.assignments.length === 1);
  await t.worker({ id: 'w2', tools: [tool], answer: () => ({ output: 'second' }) });
  first.drain();
  await until('the drain', () => drains === 1);
  expect((await pay(2)).output).toBe('second');
  expect((await pay(3)).output).toBe('second');
  expect(await held).toMatchObject({ isError: false, output: 'first' });
});

test('a drain before hello breaks the protocol: FAILED_PRECONDITION OUT_OF_ORDER', async () => {
  const client = createWorkerClient(t.address);
  const call = client.work({});
  const ended = new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
  call.on('error', () => undefined);
  call.write(create(WorkerMessageSchema, { msg: { case: 'drain', value: {} } }));
  expect((await ended).code).toBe(grpc.status.FAILED_PRECONDITION);
  client.close();
});
