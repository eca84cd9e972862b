// With the relay configured and Redis stopped, a call too large for every worker connected here
// was refused for good (INVALID_ARGUMENTS, "too large"), though a worker on another replica could
// take it once Redis is back. It is now refused UNAVAILABLE before execution, recoverable, saying
// to try again; with Redis up and no other replica hosting the tool, the refusal stays permanent.
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { WorkerService } from '../../gen/dispatch/v1/worker_pb';
import { createServiceClient } from '../../src/client';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startWorkerApp, type WorkerApp } from './worker-app';
import { startCounter } from './counting-worker';
import { eventually } from './worker-harness';

jest.setTimeout(40_000);

const MiB = 1024 * 1024;
const LIMITS = `limits: { max_argument_bytes: ${6 * MiB}, max_message_bytes: ${16 * MiB} }\n`;
const tool = (name: string, effect: Effect) => ({ name, effect, description: 'counts characters', inputSchema: '{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}' });

/** A worker of gRPC's default 4 MiB receive limit, whose hello says nothing of it: it answers each assignment with its argument's length. */
function startSmallWorker(address: string, id: string) {
  const client = createServiceClient(WorkerService, address, undefined, { 'grpc.max_receive_message_length': 4 * MiB });
  return startCounter(client, id, { tools: [tool('w_count', Effect.READ_ONLY), tool('w_pay', Effect.SIDE_EFFECT)] });
}

let redis: TestRedis;
let app: WorkerApp | undefined;
let other: WorkerApp | undefined;
let worker: ReturnType<typeof startSmallWorker> | undefined;
beforeEach(async () => {
  redis = await startRedis({ own: true });
});
afterEach(async () => {
  worker?.stop();
  await app?.close();
  await other?.close();
  other = undefined;
  await redis.close();
});

const send = async (name: string, chars: number) => (await app!.dispatch.dispatch({ sessionId: `s${chars}`, calls: [{ id: `c${chars}`, name, arguments: JSON.stringify({ text: 'a'.repeat(chars) }) }] })).results[0]!;

async function start(): Promise<void> {
  app = await startWorkerApp({ advertiseIntervalMs: 200, routeTtlMs: 1_000 }, { redisUrl: redis.url, yaml: LIMITS });
  worker = startSmallWorker(app.address, 'small');
  await eventually(async () => (await send('w_count', 3)).output === '{"worker":"small","chars":3}', 5_000, 'the worker to take calls');
}

test('Redis down: a call too large for every local worker is refused UNAVAILABLE before execution, to try again, not as too large', async () => {
  await start();
  await redis.stop();
  // Read-only: a side-effecting call's claim needs the store, which shares this Redis (it ends
  // STORE_UNAVAILABLE, not executed, before any worker is looked for).
  for (const name of ['w_count']) {
    const started = Date.now();
    const big = await send(name, 5_000_000);
    expect(big.isError).toBe(true);
    expect(big.error?.kind).toBe(ErrorKind.UNAVAILABLE);
    expect(big.error?.recoverable).toBe(true);
    expect(big.error?.message).toMatch(
      new RegExp(
        `^no worker connected here can receive the call's assignment \\(50001\\d\\d bytes; worker "small" hosting "${name}" receives 4194304\\), and the link to other dispatch replicas \\(Redis\\) is down, so a worker there that may receive it could not be reached; the call was not executed\\. Try again once the link is back`,
      ),
    );
    expect(JSON.parse(big.output)).toMatchObject({ kind: 'UNAVAILABLE', recoverable: true, retry_after_ms: 5_000 });
    // Not retried within the turn (a retry at once meets the same refusal): the model calls again
    // later, and is not told of a wait past max_backoff_ms it never asked for.
    expect(big.attempts).toBe(1);
    expect(big.warnings.filter((w) => w.startsWith('not retried'))).toEqual([]);
    // Refused at once, not held until the tool's timeout.
    expect(Date.now() - started).toBeLessThan(10_000);
  }
  expect(worker!.assignments).toHaveLength(1);
  // Small calls still run on the local worker.
  expect(await send('w_count', 4)).toMatchObject({ isError: false, output: '{"worker":"small","chars":4}' });
  // Redis back, and no other replica hosting the tool: "too large", for good, again.
  await redis.start();
  await eventually(async () => (await send('w_count', 5_000_000)).error?.kind === ErrorKind.INVALID_ARGUMENTS, 10_000, 'the refusal to be final again');
});

test('Redis down: refusals of calls too large leave the tool\'s breaker closed, and a small call runs on the local worker', async () => {
  await start();
  await redis.stop();
  for (let i = 0; i < 3; i++) {
    const big = await send('w_count', 5_000_000 + i);
    expect(big.error?.message).toMatch(/^no worker connected here can receive the call's assignment/);
    expect(big.attempts).toBe(1);
  }
  expect(await send('w_count', 6)).toMatchObject({ isError: false, output: '{"worker":"small","chars":6}' });
});

test('Redis up, no other replica hosting the tool: the refusal stays "too large", for good', async () => {
  await start();
  const big = await send('w_count', 5_000_000);
  expect(big.error?.kind).toBe(ErrorKind.INVALID_ARGUMENTS);
  expect(big.error?.recoverable).toBe(false);
  expect(big.error?.message).toMatch(/^arguments are 5000011 bytes: the assignment carrying them would be 50001\d\d bytes, over the 4194304 bytes \(4 MiB\) that worker "small"/);
  expect(big.attempts).toBe(1);
});

// The tool hosted only on another replica, and Redis stopped after start-up: the forward waited
// for Redis until the call's deadline, and each such failure counted against the tool's breaker.
test('Redis down: a call for a tool hosted only on another replica is refused at once, not retried, and three leave the breaker closed', async () => {
  app = await startWorkerApp({ advertiseIntervalMs: 200, routeTtlMs: 1_000 }, { redisUrl: redis.url, yaml: LIMITS });
  other = await startWorkerApp({ advertiseIntervalMs: 200, routeTtlMs: 1_000 }, { redisUrl: redis.url, yaml: LIMITS });
  worker = startSmallWorker(other.address, 'remote');
  await eventually(async () => (await send('w_count', 3)).output === '{"worker":"remote","chars":3}', 10_000, 'the call to reach the other replica');
  await redis.stop();
  for (let i = 0; i < 3; i++) {
    const started = Date.now();
    const down = await send('w_count', 10 + i);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(down.error).toMatchObject({ kind: ErrorKind.UNAVAILABLE, recoverable: true });
    expect(down.error?.message).toBe('the link to other dispatch replicas (Redis) is down, so no worker could be reached; the call was not executed');
    expect(JSON.parse(down.output)).toMatchObject({ retry_after_ms: 5_000 });
    expect(down.attempts).toBe(1);
    expect(down.warnings.filter((w) => w.startsWith('not retried'))).toEqual([]);
  }
  await redis.start();
  // Redis back: the call runs (an open breaker would refuse it BREAKER_OPEN).
  let tries = 0;
  await eventually(async () => !/Redis\) is down/.test((await send('w_count', 100 + ++tries)).error?.message ?? ''), 10_000, 'the relay to be back');
  expect(await send('w_count', 200)).toMatchObject({ isError: false, output: '{"worker":"remote","chars":200}' });
});
