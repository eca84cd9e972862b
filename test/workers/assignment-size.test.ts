// With limits.max_argument_bytes raised past 4 MiB, a call of ~5 MB of arguments was sent to a
// worker whose gRPC channel receives 4 MiB (every gRPC library's default): its channel refused
// the assignment and ended the stream, the call failed and the worker reconnected (a retry was
// told "no worker is connected"). An assignment past what the worker receives (its hello's
// max_receive_message_bytes, else what limits.worker_receive_bytes assumes, 4 MiB) is now refused
// INVALID_ARGUMENTS before anything is sent, and the worker goes on serving. createWorkerClient's
// hello says its channel's receive limit (64 MiB unless set). At first the assumed bound was
// limits.max_response_bytes (a bound on answers to clients): lowered, it refused 100 KB calls to
// workers receiving 4 MiB, and workers whose channels were raised (the earlier worker.py) lost
// their large calls with no setting to give them back; a worker too small for a call was chosen
// over another replica's that could take it.
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { WorkerService } from '../../gen/dispatch/v1/worker_pb';
import { createServiceClient, createWorkerClient } from '../../src/client';
import { parseConfig } from '../../src/config';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp, type TestDispatch } from '../helpers/servers';
import { startWorkerApp, type WorkerApp } from './worker-app';
import { startCounter } from './counting-worker';
import { eventually } from './worker-harness';

jest.setTimeout(30_000);

const MiB = 1024 * 1024;
const TOOL = { name: 'w_count', effect: Effect.READ_ONLY, description: 'counts characters', inputSchema: '{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}' };
const LIMITS = `limits: { max_argument_bytes: ${6 * MiB}, max_message_bytes: ${16 * MiB} }\n`;

let t: TestDispatch;
let stops: (() => void)[] = [];
beforeEach(async () => {
  t = await startApp(LIMITS);
  stops = [];
});
afterEach(async () => {
  for (const stop of stops) stop();
  await t.close();
});

const counter = async (client: Parameters<typeof startCounter>[0], id: string, maxReceive?: number) => {
  const worker = startCounter(client, id, { tools: [TOOL], maxReceive });
  stops.push(worker.stop);
  await eventually(async () => (await t.registry.listTools({})).tools.some((x) => x.name === TOOL.name), 5_000, 'the worker to register');
  return worker;
};
const call = async (session: string, chars: number) => {
  const { results } = await t.dispatch.dispatch({ sessionId: session, calls: [{ id: `c-${chars}`, name: TOOL.name, arguments: JSON.stringify({ text: 'a'.repeat(chars) }) }] });
  return results[0]!;
};

test('a worker whose hello says nothing gets no assignment past what limits.worker_receive_bytes assumes: refused before sending, the worker serves on', async () => {
  // A plain client of grpc's default receive limit, whose hello leaves max_receive_message_bytes out.
  const worker = await counter(createServiceClient(WorkerService, t.address, undefined, { 'grpc.max_receive_message_length': 4 * MiB }), 'plain');
  const big = await call('s', 5_000_000);
  expect(big.isError).toBe(true);
  expect(big.error?.kind).toBe(ErrorKind.INVALID_ARGUMENTS);
  expect(big.error?.message).toMatch(
    /^arguments are 5000011 bytes: the assignment carrying them would be 50001\d\d bytes, over the 4194304 bytes \(4 MiB\) that worker "plain" hosting "w_count" is ASSUMED to receive \(limits\.worker_receive_bytes, as its hello does not say max_receive_message_bytes\); it was not sent and the tool was not executed\. To allow it, have the worker say its receive limit \(grpc\.max_receive_message_length, raised\) in its hello's max_receive_message_bytes, or, for workers that do not send it, raise limits\.worker_receive_bytes to what their channels receive, or keep limits\.max_argument_bytes below it$/,
  );
  expect(big.error?.message).not.toContain('no worker is connected');
  expect(big.attempts).toBe(1);
  expect(worker.assignments).toHaveLength(0);
  const small = await call('s', 10);
  expect(small).toMatchObject({ isError: false, output: '{"worker":"plain","chars":10}' });
  expect(worker.assignments).toHaveLength(1);
  expect(worker.ended()).toBeUndefined();
});

test("createWorkerClient's hello says its channel's receive limit: assignments up to it are sent, larger ones refused", async () => {
  const worker = await counter(createWorkerClient(t.address, undefined, { 'grpc.max_receive_message_length': 4.5 * MiB }), 'ts');
  // Past max_response_bytes (4 MiB), within the 4.5 MiB the hello said.
  expect(await call('s', 4_500_000)).toMatchObject({ isError: false, output: '{"worker":"ts","chars":4500000}' });
  const big = await call('s', 5_000_000);
  expect(big.error?.kind).toBe(ErrorKind.INVALID_ARGUMENTS);
  expect(big.error?.message).toMatch(/over the 4718592 bytes that worker "ts" hosting "w_count" can receive \(its hello's max_receive_message_bytes\); it was not sent/);
  expect(await call('s', 3)).toMatchObject({ isError: false, output: '{"worker":"ts","chars":3}' });
  expect(worker.assignments.map((a) => a.call!.arguments.length)).toEqual([4_500_011, 14]);
  expect(worker.ended()).toBeUndefined();
});

test('with its default 64 MiB, a createWorkerClient worker gets the 5 MB call; a worker that cannot is passed over for one that can', async () => {
  const small = await counter(createServiceClient(WorkerService, t.address, undefined, { 'grpc.max_receive_message_length': 4 * MiB }), 'small');
  const large = await counter(createWorkerClient(t.address), 'large');
  for (let i = 0; i < 3; i++) expect(await call(`s${i}`, 5_000_000)).toMatchObject({ isError: false, output: '{"worker":"large","chars":5000000}' });
  expect(small.assignments).toHaveLength(0);
  expect(small.ended()).toBeUndefined();
  expect(large.ended()).toBeUndefined();
});

test('limits.max_response_bytes (answers to clients) does not bound assignments: lowered to 64 KiB, a worker whose hello says nothing gets a 100 KB call', async () => {
  await t.close();
  t = await startApp('limits: { max_response_bytes: 65536 }\n');
  const worker = await counter(createServiceClient(WorkerService, t.address, undefined, { 'grpc.max_receive_message_length': 4 * MiB }), 'plain');
  // Before: INVALID_ARGUMENTS, "over the 65536 bytes that worker "plain" ... can receive (limits.max_response_bytes ...)".
  expect(await call('s', 100_000)).toMatchObject({ isError: false, output: '{"worker":"plain","chars":100000}' });
  expect(worker.assignments).toHaveLength(1);
});

test('limits.worker_receive_bytes raised: a worker whose hello says nothing (its channel raised, as worker.py before it said so) gets a 5 MB call', async () => {
  await t.close();
  t = await startApp(`limits: { max_argument_bytes: ${6 * MiB}, max_message_bytes: ${16 * MiB}, worker_receive_bytes: ${5.5 * MiB} }\n`);
  const worker = await counter(createServiceClient(WorkerService, t.address, undefined, { 'grpc.max_receive_message_length': 64 * MiB }), 'older');
  expect(await call('s', 5_000_000)).toMatchObject({ isError: false, output: '{"worker":"older","chars":5000000}' });
  const over = await call('s', 6_000_000);
  expect(over.error?.kind).toBe(ErrorKind.INVALID_ARGUMENTS);
  expect(over.error?.message).toMatch(/over the 5767168 bytes that worker "older" hosting "w_count" is ASSUMED to receive \(limits\.worker_receive_bytes, as its hello does not say max_receive_message_bytes\)/);
  expect(worker.assignments).toHaveLength(1);
  expect(worker.ended()).toBeUndefined();
});

test('limits.worker_receive_bytes: at most max_message_bytes, 4 MiB or max_message_bytes when lower by default, and a misspelling is told what was meant', () => {
  expect(parseConfig('tools: []\n', 'c.yaml').limits.workerReceiveBytes).toBe(4 * MiB);
  expect(parseConfig('limits: { max_message_bytes: 1048576 }\n', 'c.yaml').limits.workerReceiveBytes).toBe(MiB);
  expect(parseConfig(`limits: { max_message_bytes: ${16 * MiB}, worker_receive_bytes: ${16 * MiB} }\n`, 'c.yaml').limits.workerReceiveBytes).toBe(16 * MiB);
  expect(() => parseConfig(`limits: { worker_receive_bytes: ${8 * MiB} }\n`, 'c.yaml')).toThrow(/limits\.workerReceiveBytes must be at most max_message_bytes \(4194304\)|worker_receive_bytes.*at most max_message_bytes/);
  expect(() => parseConfig('limits: { worker_receive_bytes: 0 }\n', 'c.yaml')).toThrow(/worker_?[rR]eceive_?[bB]ytes/);
  expect(() => parseConfig('limits: { worker_recieve_bytes: 5 }\n', 'c.yaml')).toThrow('did you mean worker_receive_bytes?');
});

describe('across replicas sharing Redis', () => {
  let redis: TestRedis;
  let a: WorkerApp;
  let b: WorkerApp;
  beforeAll(async () => {
    redis = await startRedis({ own: true });
  });
  afterAll(() => redis.close());
  afterEach(async () => {
    await a?.close();
    await b?.close();
  });

  it('a call arriving at another replica is refused there, before anything is sent, as a side-effecting one', async () => {
    const options = { advertiseIntervalMs: 200, routeTtlMs: 1_000 };
    a = await startWorkerApp(options, { redisUrl: redis.url, yaml: LIMITS });
    b = await startWorkerApp(options, { redisUrl: redis.url, yaml: LIMITS });
    const pay = { ...TOOL, name: 'w_pay', effect: Effect.SIDE_EFFECT };
    const worker = startCounter(createServiceClient(WorkerService, a.address, undefined, { 'grpc.max_receive_message_length': 4 * MiB }), 'on-a', { tools: [pay] });
    stops.push(worker.stop);
    await eventually(async () => (await b.registry.listTools({})).tools.some((x) => x.name === 'w_pay'), 5_000, 'the tool on replica b');
    const send = async (chars: number) => (await b.dispatch.dispatch({ sessionId: 'x', calls: [{ id: `p${chars}`, name: 'w_pay', arguments: JSON.stringify({ text: 'a'.repeat(chars) }) }] })).results[0]!;
    const big = await send(5_000_000);
    expect(big.error?.kind).toBe(ErrorKind.INVALID_ARGUMENTS);
    expect(big.error?.message).toMatch(/^arguments are 5000011 bytes: the assignment carrying them would be 50001\d\d bytes, over the 4194304 bytes \(4 MiB\) that worker "on-a" hosting "w_pay" is ASSUMED to receive .*; it was not sent and the tool was not executed/);
    expect(await send(4)).toMatchObject({ isError: false, output: '{"worker":"on-a","chars":4}' });
    expect(worker.assignments).toHaveLength(1);
    expect(worker.ended()).toBeUndefined();
  });

  it('a call no local worker can receive goes to another replica whose worker can; refused, with that replica\'s bound, only when none can', async () => {
    const options = { advertiseIntervalMs: 200, routeTtlMs: 1_000 };
    a = await startWorkerApp(options, { redisUrl: redis.url, yaml: LIMITS });
    b = await startWorkerApp(options, { redisUrl: redis.url, yaml: LIMITS });
    const pay = { ...TOOL, name: 'w_pay', effect: Effect.SIDE_EFFECT };
    // On a: 4 MiB, its hello silent. On b: 4.5 MiB, its hello says so.
    const small = startCounter(createServiceClient(WorkerService, a.address, undefined, { 'grpc.max_receive_message_length': 4 * MiB }), 'wA-small', { tools: [pay] });
    const large = startCounter(createWorkerClient(b.address, undefined, { 'grpc.max_receive_message_length': 4.5 * MiB }), 'wB-big', { tools: [pay], maxReceive: 4.5 * MiB });
    stops.push(small.stop, large.stop);
    await eventually(async () => (await a.registry.listTools({})).tools.some((x) => x.name === 'w_pay') && (await b.registry.listTools({})).tools.some((x) => x.name === 'w_pay'), 5_000, 'the tool on both replicas');
    const send = async (chars: number) => (await a.dispatch.dispatch({ sessionId: `x${chars}`, calls: [{ id: `p${chars}`, name: 'w_pay', arguments: JSON.stringify({ text: 'a'.repeat(chars) }) }] })).results[0]!;
    // b's route is advertised once its worker is connected: the first call may come before it.
    await eventually(async () => (await send(4_400_000)).output === '{"worker":"wB-big","chars":4400000}', 5_000, 'the 4.4 MB call to run on b');
    expect(await send(4)).toMatchObject({ isError: false, output: '{"worker":"wA-small","chars":4}' });
    const big = await send(5_000_000);
    expect(big.error?.kind).toBe(ErrorKind.INVALID_ARGUMENTS);
    expect(big.error?.message).toMatch(/^arguments are 5000011 bytes: the assignment carrying them would be 50001\d\d bytes, over the 4718592 bytes that worker "wB-big" hosting "w_pay" can receive \(its hello's max_receive_message_bytes\); it was not sent and the tool was not executed\. To allow it, raise the worker's receive limit/);
    expect(big.attempts).toBe(1);
    expect(small.assignments.map((x) => x.call!.arguments.length)).toEqual([15]);
    expect(large.assignments.map((x) => x.call!.arguments.length)).toEqual([4_400_011]);
    expect(small.ended()).toBeUndefined();
    expect(large.ended()).toBeUndefined();
  });
});
