// Redis lost while the relay was forwarding a call (after the executor found it reachable: the
// route lookup or the PUBLISH held, then the server gone): the call waited until its timeout and
// failed as one that timed out (retried within the turn, counted by the tool's breaker), though
// no other replica could be reached. It is now refused at once, as when Redis was down before the
// call: UNAVAILABLE before, recoverable, retry_after 5 s, not retried within the turn, not counted
// by the breaker (notTheTool); a call too large for the local worker says so, as when Redis was
// down before it. So is a forward before the relay's first subscription.
// Once a read-only assignment's PUBLISH was written, though, the call was refused "not executed"
// too; but ioredis sends a written command again when it reconnects (a connection killed, Redis
// back at once), and the worker ran it. It now fails during, saying the call may have run, and is
// retried: answered by the worker, or, with Redis still gone, refused saying an earlier attempt
// was sent.
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { WorkerService } from '../../gen/dispatch/v1/worker_pb';
import { createServiceClient } from '../../src/client';
import { DispatchError } from '../../src/errors';
import { createRedisRelay } from '../../src/executors/worker/redis-relay';
import { resolveWorkerOptions } from '../../src/executors/worker/worker-options';
import { createWorkerPool } from '../../src/executors/worker/worker-pool';
import { SILENT_LOGGER } from '../../src/log';
import { createSchemaCompiler, createToolRegistry } from '../../src/registry';
import { freeRedisPort, startRedis, type TestRedis } from '../helpers/redis-server';
import { startCounter } from './counting-worker';
import { startWorkerApp, type WorkerApp } from './worker-app';
import { echoAnswer, eventually, type TestWorker } from './worker-harness';

jest.setTimeout(30_000);

const MiB = 1024 * 1024;
const MESSAGE = 'the link to other dispatch replicas (Redis) is down, so no worker could be reached; the call was not executed';
const AFTER_SENT = 'the link to other dispatch replicas (Redis) is down, so no worker could be reached; this attempt was not executed; an earlier attempt was sent to a worker (the call may or may not have run)';
const TOO_LARGE = /^no worker connected here can receive the call's assignment \(50001\d\d bytes; worker "small" hosting "w_count" receives 4194304\), and the link to other dispatch replicas \(Redis\) is down/;
const counted = { name: 'w_count', effect: Effect.READ_ONLY, timeoutMs: 6_000, inputSchema: '{"type":"object","properties":{"text":{"type":"string"}}}' };

let redis: TestRedis | undefined;
let a: WorkerApp | undefined;
let b: WorkerApp | undefined;
let onA: TestWorker | undefined;
const counters: ReturnType<typeof startCounter>[] = [];
afterEach(async () => {
  for (const c of counters.splice(0)) c.stop();
  await Promise.all([a?.close(), b?.close()]);
  await redis?.close();
  a = b = redis = onA = undefined;
});

/**
 * Replica a hosts x_read (echoing), which b reaches through the relay; with `sizes`, w_count too,
 * on a worker receiving 16 MiB, and b on one of gRPC's default 4 MiB, whose hello says nothing.
 */
async function twoReplicas(sizes = false): Promise<void> {
  redis = await startRedis({ own: true });
  // publishStallMs: how long a close waits for Redis, gone by then (a standalone PUBLISH has no stall bound).
  const options = { advertiseIntervalMs: 200, routeTtlMs: 5_000, publishStallMs: 200 };
  const yaml = `limits: { max_argument_bytes: ${6 * MiB}, max_message_bytes: ${16 * MiB} }\n`;
  // The executors plugin alone: each replica keeps its records in its memory store, so that only the relay needs Redis.
  a = await startWorkerApp(options, { redisUrl: redis.url, only: true, yaml });
  b = await startWorkerApp(options, { redisUrl: redis.url, only: true, yaml });
  onA = await a.worker({ id: 'on-a', tools: [{ name: 'x_read', inputSchema: '{"type":"object"}', effect: Effect.READ_ONLY, timeoutMs: 6_000 }], answer: echoAnswer('on-a') });
  await eventually(async () => (await read()).error === undefined, 5_000, 'x_read to reach replica a');
  if (!sizes) return;
  counters.push(startCounter(createServiceClient(WorkerService, b.address, undefined, { 'grpc.max_receive_message_length': 4 * MiB }), 'small', { tools: [counted] }));
  counters.push(startCounter(createServiceClient(WorkerService, a.address, undefined, { 'grpc.max_receive_message_length': 16 * MiB }), 'big', { tools: [counted], maxReceive: 16 * MiB }));
  await eventually(async () => (await large()).output === '{"worker":"big","chars":5000000}', 5_000, 'the large call to reach replica a');
}

const result = (name: string, id: string, args: string) => b!.dispatch.dispatch({ sessionId: 's1', calls: [{ id, name, arguments: args }] }).then((r) => r.results[0]!);
const read = () => result('x_read', 'read', '{"n":1}');
const large = () => result('w_count', 'large', JSON.stringify({ text: 'a'.repeat(5_000_000) }));

/** Makes `calls` on b while `hold` keeps the relay's commands waiting, and kills Redis 300 ms later. */
async function callThenKill<T>(hold: () => void, calls: () => Promise<T>): Promise<{ results: T; ms: number }> {
  hold();
  const started = Date.now();
  const results = calls();
  await new Promise((r) => setTimeout(r, 300));
  await redis!.stop('SIGKILL');
  return { results: await results, ms: Date.now() - started };
}

/** Refused to call again in 5 s, not retried within the turn (after `attempts`), and not held until the tool's 6 s timeout. */
function expectLater(refused: Awaited<ReturnType<typeof read>>, attempts = 1): void {
  expect(refused.error).toMatchObject({ kind: ErrorKind.UNAVAILABLE, recoverable: true });
  expect(JSON.parse(refused.output)).toMatchObject({ kind: 'UNAVAILABLE', recoverable: true, retry_after_ms: 5_000 });
  expect(refused.attempts).toBe(attempts);
  expect(refused.warnings.filter((w) => w.startsWith('not retried'))).toEqual([]);
}

test('Redis lost while route lookups wait: a call for a tool elsewhere and one too large for the local worker are refused at once, to call again later', async () => {
  await twoReplicas(true);
  const { results, ms } = await callThenKill(() => redis!.signal('SIGSTOP'), () => Promise.all([read(), large()]));
  expectLater(results[0]);
  expect(results[0].error?.message).toBe(MESSAGE);
  expectLater(results[1]);
  expect(results[1].error?.message).toMatch(TOO_LARGE);
  expect(ms).toBeLessThan(2_000);
});

test("Redis lost while a read-only assignment's PUBLISH waits (written, so it may be sent again): tried again after the retry policy's backoff, then refused to call again later, saying it may have run", async () => {
  await twoReplicas();
  // Reads still answer (the route lookup); the PUBLISH waits.
  const { results, ms } = await callThenKill(() => redis!.cli('CLIENT', 'PAUSE', '10000', 'WRITE'), read);
  // The first attempt failed during (it may have run), the second found the relay down.
  expectLater(results, 2);
  expect(results.error?.message).toBe(AFTER_SENT);
  expect(ms).toBeLessThan(2_000);
});

test("the relay's connection killed (CLIENT KILL) while a read-only assignment's PUBLISH waits: ioredis sends it again and the worker runs it, so the call is not said to be unexecuted", async () => {
  await twoReplicas();
  redis!.cli('CLIENT', 'PAUSE', '10000', 'WRITE');
  const started = Date.now();
  const killed = result('x_read', 'killed', '{"n":2}');
  await new Promise((r) => setTimeout(r, 300));
  // Both replicas' relay connections (the subscriptions are of type pubsub, and stay); Redis stays up.
  redis!.cli('CLIENT', 'KILL', 'TYPE', 'normal');
  redis!.cli('CLIENT', 'UNPAUSE');
  const answer = await killed;
  // The assignment written before the kill reached the worker: "not executed" would be untrue.
  await eventually(() => onA!.assignments.some((x) => x.call?.id === 'killed' && x.attempt === 1), 3_000, 'the first attempt to reach the worker');
  if (answer.error === undefined) expect(JSON.parse(answer.output)).toEqual({ worker: 'on-a', args: { n: 2 } });
  else expect(answer.error.message).toMatch(/may or may not have run/);
  expect(answer.error?.message ?? '').not.toMatch(/the call was not executed/);
  expect(Date.now() - started).toBeLessThan(3_000);
});

test('a forward before the relay has subscribed is refused to call again later, not counted by the breaker', async () => {
  const registry = createToolRegistry(createSchemaCompiler(65_536), () => new Set(['worker']));
  // A close with Redis away waits publishStallMs for its QUIT.
  const options = resolveWorkerOptions({ publishStallMs: 100 });
  const pool = createWorkerPool({ heartbeatTimeoutMs: options.heartbeatTimeoutMs, sweepIntervalMs: options.sweepIntervalMs, logger: SILENT_LOGGER });
  // Nothing listens on the port: start-up gives up waiting for the subscription after 2 s.
  const relay = await createRedisRelay({ url: `redis://127.0.0.1:${await freeRedisPort()}`, pool, registry, logger: SILENT_LOGGER, options });
  try {
    const request = { tenant: 't', tool: 'x_read', toolCallId: 'c1', argumentsJson: '{}', sessionId: 's1', attempt: 1, idempotencyKey: 'k', deadline: Date.now() + 5_000, readOnly: true };
    const error = await relay.forward(request, new AbortController().signal).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DispatchError);
    expect((error as DispatchError).message).toBe(MESSAGE);
    expect(error).toMatchObject({ kind: ErrorKind.UNAVAILABLE, phase: 'before', recoverable: true, notTheTool: true, notRetriedWithinTurn: true, retryAfterMs: 5_000 });
  } finally {
    await relay.close();
  }
});
