import type { Delivery } from '../../src/executors/executor';
import { createRedisRelay, type RedisRelay } from '../../src/executors/worker/redis-relay';
import { resolveWorkerOptions } from '../../src/executors/worker/worker-options';
import type { AssignmentRequest, WorkerPool } from '../../src/executors/worker/worker-pool';
import { SILENT_LOGGER } from '../../src/log';
import type { AbortHook } from '../../src/pipeline/signals';
import type { ToolRegistry } from '../../src/registry';
import { startRedis, type TestRedis } from '../helpers/redis-server';

// A worker call forwarded to another replica while a standalone Redis is frozen (SIGSTOP): the
// relay's connection queues while Redis is away, so its route lookup waits; the call must still
// end when its signal aborts, say it sent nothing (the pipeline took it for cut off DURING, and
// the same call after Redis came back was OUTCOME_UNKNOWN), and send nothing once Redis answers again.

let redis: TestRedis;
const relays: RedisRelay[] = [];
const assigned: string[] = [];
beforeAll(async () => {
  redis = await startRedis({ own: true });
  const registry = { lookup: () => undefined, applyRemote: () => undefined } as unknown as ToolRegistry;
  const pool = (hosted: boolean) =>
    ({
      hosted: () => (hosted ? [{ tenant: 't', tool: 'w_tool' }] : []),
      assign: async (request: AssignmentRequest, hook: AbortHook) => {
        assigned.push(request.idempotencyKey);
        if (request.idempotencyKey !== 'slow') return 'done';
        let aborted = false;
        hook.onAbort(() => (aborted = true));
        await new Promise((resolve) => setTimeout(resolve, 200));
        return aborted ? 'aborted' : 'done';
      },
      onHostedChange: () => undefined,
    }) as unknown as WorkerPool;
  const options = resolveWorkerOptions({ publishStallMs: 300 });
  relays.push(await createRedisRelay({ url: redis.url, pool: pool(true), registry, logger: SILENT_LOGGER, options }));
  relays.push(await createRedisRelay({ url: redis.url, pool: pool(false), registry, logger: SILENT_LOGGER, options }));
});
afterAll(async () => {
  for (const relay of relays) await relay.close();
  await redis.close();
});

const request = (idempotencyKey: string, ms = 5_000): AssignmentRequest => ({ tenant: 't', tool: 'w_tool', toolCallId: 'c', argumentsJson: '{}', sessionId: 's', attempt: 1, idempotencyKey, deadline: Date.now() + ms });

test('a forward whose route lookup Redis holds ends with its abort, says it sent nothing, and nothing is sent after Redis resumes', async () => {
  const told: Record<string, Delivery[]> = { 'warm-up': [], held: [] };
  expect(await relays[1]!.forward(request('warm-up'), new AbortController().signal, (state) => told['warm-up']!.push(state))).toBe('done');
  expect(told['warm-up']).toEqual(['pending', 'sent']);
  redis.signal('SIGSTOP');
  try {
    const started = Date.now();
    await expect(relays[1]!.forward(request('held'), AbortSignal.timeout(300), (state) => told.held!.push(state))).rejects.toMatchObject({ name: 'TimeoutError' });
    // Not sent: the pipeline ends the call as not executed (its record released), not DURING.
    expect(told.held).toEqual(['pending']);
    expect(Date.now() - started).toBeLessThan(1_500);
  } finally {
    redis.signal('SIGCONT');
  }
  // A later call goes through, and the held one was never sent.
  expect(await relays[1]!.forward(request('after'), new AbortController().signal)).toBe('done');
  expect(assigned).toEqual(['warm-up', 'after']);
});

test('a call whose deadline is past 2^31-1 ms away is awaited and run, not timed out at once', async () => {
  // Both relays' timers (the reply awaited, the assignment run) were given the whole time, which
  // Node runs at once: the caller failed TIMEOUT and the hosting replica aborted the assignment.
  expect(await relays[1]!.forward(request('slow', 4_294_967_295), new AbortController().signal)).toBe('done');
});
