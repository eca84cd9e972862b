import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { routeKey } from '../../src/executors/worker/route-table';
import type { AssignmentRequest } from '../../src/executors/worker/worker-pool';
import { DEFAULT_TENANT } from '../../src/server/principal';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startWorkerApp, type WorkerApp } from './worker-app';
import { echoAnswer, eventually, type TestWorker } from './worker-harness';

// Assignments that reach a replica late, published on its channel by the test as another replica
// would: held on a stalled Cluster node past their deadline, overtaken by their own cancel, or
// sent twice (a read-only one sent again after a stalled publish). None of them may run.

const tool = { name: 'x_late', inputSchema: '{"type":"object"}', effect: Effect.SIDE_EFFECT, timeoutMs: 5_000 };
/** A read-only tool of the same worker: only a read-only assignment is sent again, and it goes only to a worker declaring its tool read-only. */
const readTool = { ...tool, name: 'x_late_read', effect: Effect.READ_ONLY };

let redis: TestRedis;
let app: WorkerApp;
let worker: TestWorker;
let hostId: string;
let publisher: Redis;
let listener: Redis;
/** Replies received on the test's own replica channel, by assignment id. */
const replies = new Map<string, { output?: string; error?: { kind: ErrorKind; phase: string; message: string } }>();
const from = `test-${randomUUID()}`;

beforeAll(async () => {
  redis = await startRedis({ own: true });
  app = await startWorkerApp({ advertiseIntervalMs: 200, routeTtlMs: 2_000 }, { redisUrl: redis.url, only: true });
  worker = await app.worker({ id: 'host', tools: [tool, readTool], answer: echoAnswer('host') });
  publisher = new Redis(redis.url);
  listener = new Redis(redis.url);
  listener.on('message', (_channel: string, text: string) => {
    const message = JSON.parse(text) as { t: string; id: string; output?: string; error?: { kind: ErrorKind; phase: string; message: string } };
    if (message.t === 'reply') replies.set(message.id, message);
  });
  await listener.subscribe(`dispatch:worker:replica:${from}`);
  // The hosting replica's id, from its advertisement of the tool.
  await eventually(async () => Object.keys(await publisher.hgetall(routeKey(DEFAULT_TENANT, tool.name))).length === 1, 5_000, 'the route of the tool');
  hostId = Object.keys(await publisher.hgetall(routeKey(DEFAULT_TENANT, tool.name)))[0]!;
});
afterAll(async () => {
  listener?.disconnect();
  publisher?.disconnect();
  await app?.close();
  await redis?.close();
});

const request = (toolCallId: string, deadline: number, readOnly = false): AssignmentRequest => ({
  tenant: DEFAULT_TENANT,
  tool: readOnly ? readTool.name : tool.name,
  toolCallId,
  argumentsJson: '{"n":1}',
  sessionId: 's1',
  attempt: 1,
  idempotencyKey: '',
  deadline,
  readOnly,
});
const send = (message: object) => publisher.publish(`dispatch:worker:replica:${hostId}`, JSON.stringify(message));
const assign = (id: string, req: AssignmentRequest) => send({ t: 'assign', id, from, request: req });
const ran = (toolCallId: string) => worker.assignments.filter((a) => a.call?.id === toolCallId).length;

/** Sends a fresh assignment and waits for its reply: every message published before it was handled. */
async function barrier(): Promise<void> {
  const id = randomUUID();
  expect(await assign(id, request(`barrier-${id}`, Date.now() + 5_000))).toBe(1);
  await eventually(() => replies.has(id), 5_000, 'the barrier assignment\'s reply');
}

test('a fresh assignment runs and is answered on the sender\'s channel', async () => {
  const id = randomUUID();
  await assign(id, request('fresh', Date.now() + 5_000));
  await eventually(() => replies.has(id), 5_000, 'the reply');
  expect(JSON.parse(replies.get(id)!.output!)).toEqual({ worker: 'host', args: { n: 1 } });
  expect(ran('fresh')).toBe(1);
});

test('an assignment arriving after its deadline is not run: its sender is told TIMEOUT, before execution', async () => {
  const id = randomUUID();
  await assign(id, request('expired', Date.now() - 1));
  await eventually(() => replies.has(id), 5_000, 'the refusal');
  expect(replies.get(id)!.error).toMatchObject({ kind: ErrorKind.TIMEOUT, phase: 'before' });
  expect(replies.get(id)!.error!.message).toBe('the call reached the replica hosting "x_late" after its deadline; it was not executed');
  await barrier();
  expect(ran('expired')).toBe(0);
});

test('an assignment whose cancel arrived first is not run', async () => {
  const id = randomUUID();
  const deadline = Date.now() + 5_000;
  await send({ t: 'cancel', id, deadline });
  await assign(id, request('overtaken', deadline));
  await barrier();
  expect(ran('overtaken')).toBe(0);
  expect(replies.has(id)).toBe(false);
});

test('a cancel from a replica of an older version (no deadline) also stops its late assignment', async () => {
  const id = randomUUID();
  await send({ t: 'cancel', id });
  await assign(id, request('overtaken-old', Date.now() + 5_000));
  await barrier();
  expect(ran('overtaken-old')).toBe(0);
});

test('an assignment received twice runs once, whether the copy comes while it runs or after it ended', async () => {
  const id = randomUUID();
  const req = request('twice', Date.now() + 5_000, true);
  await assign(id, req);
  await assign(id, req);
  await eventually(() => replies.has(id), 5_000, 'the reply');
  await assign(id, req);
  await barrier();
  expect(ran('twice')).toBe(1);
});

test('a real call across replicas still runs', async () => {
  const other = await startWorkerApp({ advertiseIntervalMs: 200, routeTtlMs: 2_000 }, { redisUrl: redis.url, only: true });
  try {
    await eventually(async () => (await other.registry.listTools({})).tools.some((t) => t.name === tool.name), 5_000, 'the tool on the other replica');
    const result = (await other.dispatch.dispatch({ sessionId: 's2', calls: [{ id: 'across', name: tool.name, arguments: '{"n":2}' }] })).results[0]!;
    expect(JSON.parse(result.output)).toEqual({ worker: 'host', args: { n: 2 } });
  } finally {
    await other.close();
  }
});

test('remembered assignments are bounded (worker.maxRememberedAssignments): past it the oldest are forgotten', async () => {
  const bounded = { ...tool, name: 'x_bounded' };
  const small = await startWorkerApp({ advertiseIntervalMs: 200, routeTtlMs: 2_000, maxRememberedAssignments: 2 }, { redisUrl: redis.url, only: true });
  try {
    // Left unanswered until the end, so that no assignment ends (and is remembered) meanwhile.
    const host = await small.worker({ id: 'small', tools: [bounded] });
    await eventually(async () => Object.keys(await publisher.hgetall(routeKey(DEFAULT_TENANT, bounded.name))).length === 1, 5_000, 'the route of the tool');
    const smallId = Object.keys(await publisher.hgetall(routeKey(DEFAULT_TENANT, bounded.name)))[0]!;
    const to = (message: object) => publisher.publish(`dispatch:worker:replica:${smallId}`, JSON.stringify(message));
    const deadline = Date.now() + 5_000;
    const ids = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    for (const id of ids.slice(0, 3)) await to({ t: 'cancel', id, deadline });
    for (const [k, id] of ids.entries()) await to({ t: 'assign', id, from, request: { ...request(`bounded-${k}`, deadline), tool: bounded.name } });
    await eventually(() => host.assignments.some((a) => a.call?.id === 'bounded-3'), 5_000, 'the last assignment at the worker');
    // The first cancel was forgotten when the third came: its assignment ran; the others did not.
    expect(host.assignments.map((a) => a.call?.id)).toEqual(['bounded-0', 'bounded-3']);
    for (const a of host.assignments) host.complete(a.assignmentId, 'done');
  } finally {
    await small.close();
  }
});
