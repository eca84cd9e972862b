// A worker whose hello alone holds more spec bytes than its tenant may (limits.
// max_schema_bytes_per_tenant: long descriptions, say) was refused RESOURCE_EXHAUSTED, which
// workers retry: it reconnected and was refused again, forever, with no tool registered. Such a
// hello is now INVALID_ARGUMENT, naming how far over it is and its largest tools, and the example
// worker stops at once; a hello over only with the tenant's other tools stays RESOURCE_EXHAUSTED
// (room may be freed), which the example worker retries with growing waits.
import { status } from '@grpc/grpc-js';
import { keepWorking, type HostedTool } from '../../examples/typescript/worker';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startWorkerApp, type WorkerApp } from './worker-app';
import { startWorker } from './worker-harness';

jest.setTimeout(30_000);

const LIMIT = 3000;
/** A worker tool whose description or input schema is `bytes` long. */
const tool = (name: string, bytes: { description?: number; schema?: number }) => ({
  name,
  effect: Effect.READ_ONLY,
  description: 'd'.repeat(bytes.description ?? 10),
  inputSchema: bytes.schema === undefined ? '{"type":"object"}' : `{"type":"object","description":"${'s'.repeat(bytes.schema - 34)}"}`,
});
const names = async (t: WorkerApp) => (await t.registry.listTools({})).tools.map((x) => x.name);

let t: WorkerApp;
beforeEach(async () => {
  t = await startWorkerApp({}, { yaml: `limits: { max_schema_bytes_per_tenant: ${LIMIT} }\n` });
});
afterEach(() => t.close());

test('a hello whose descriptions alone pass the limit is INVALID_ARGUMENT, naming how far over and its largest tools; none registered', async () => {
  const tools = [tool('w_a', { description: 700 }), tool('w_b', { description: 1200 }), tool('w_c', { description: 900 }), tool('w_d', { description: 1000 })];
  const ended = await startWorker(t.address, { id: 'long', tools }).ended;
  expect(ended.code).toBe(status.INVALID_ARGUMENT);
  expect(ended.details).toMatch(
    /^hello declares 4 tools holding (\d+) bytes of tool specs besides their input schemas \(descriptions, pointers, names\.\.\.\), (\d+) over the limit of 3000 that all of a tenant's tools may hold \(limits\.max_schema_bytes_per_tenant\): no retry can register them\. Largest: tools\[1\] \("w_b"\) \d+, tools\[3\] \("w_d"\) \d+, tools\[2\] \("w_c"\) \d+; make their descriptions shorter, or host fewer tools on one worker$/,
  );
  const [, total, over] = /holding (\d+) .*, (\d+) over/.exec(ended.details)!;
  expect(Number(total)).toBeGreaterThan(3800);
  expect(Number(total) - LIMIT).toBe(Number(over));
  expect(await names(t)).toEqual([]);
});

test('a hello whose input schemas alone pass the limit is INVALID_ARGUMENT too, naming the schemas', async () => {
  const ended = await startWorker(t.address, { id: 'big', tools: [tool('w_a', { schema: 2000 }), tool('w_b', { schema: 1500 })] }).ended;
  expect(ended.code).toBe(status.INVALID_ARGUMENT);
  expect(ended.details).toBe(
    "hello declares 2 tools holding 3500 bytes of input schemas, 500 over the limit of 3000 that all of a tenant's tools may hold (limits.max_schema_bytes_per_tenant): no retry can register them. " +
      'Largest: tools[0] ("w_a") 2000, tools[1] ("w_b") 1500; make their schemas smaller, or host fewer tools on one worker',
  );
});

/** The example worker hosting `specs`, its log, and how many streams it opened by `ms` (or by its end). */
async function exampleWorker(specs: ReturnType<typeof tool>[], ms: number) {
  const hosted: Record<string, HostedTool> = Object.fromEntries(specs.map((spec) => [spec.name, { spec, run: () => 'ok' }]));
  const log: string[] = [];
  const worker = keepWorking({ address: t.address, tools: hosted, workerId: 'ex', initialBackoffMs: 50, maxBackoffMs: 400, log: (line) => log.push(line) });
  const ended = await Promise.race([worker.done, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), ms))]);
  worker.stop();
  await worker.done;
  // A refused stream says no "hosting": each one ended says why, besides the last.
  return { ended, log, streams: 1 + log.filter((line) => line.startsWith('stream ended')).length, waits: log.map((line) => /a new one in (\d+) ms$/.exec(line)?.[1]).filter((w) => w !== undefined).map(Number) };
}

test('the example worker stops at once when its hello alone is over: one stream, no retry', async () => {
  const { ended, streams } = await exampleWorker([tool('w_a', { description: 2000 }), tool('w_b', { description: 2000 })], 3000);
  expect(ended?.code).toBe(status.INVALID_ARGUMENT);
  expect(streams).toBe(1);
});

test("over only with the tenant's other tools: RESOURCE_EXHAUSTED, and the example worker retries with waits that grow, not in a hot loop", async () => {
  await t.worker({ id: 'first', tools: [tool('w_first', { description: 2000 })] });
  const { ended, log, streams, waits } = await exampleWorker([tool('w_second', { description: 2000 })], 2000);
  expect(ended).toBeUndefined();
  expect(log).toContainEqual(expect.stringMatching(/^stream ended \(RESOURCE_EXHAUSTED: tenant "default" would have \d+ bytes of tool specs besides their input schemas .*\); a new one in \d+ ms$/));
  expect(await names(t)).toEqual(['w_first']);
  expect(streams).toBeGreaterThanOrEqual(2);
  expect(streams).toBeLessThanOrEqual(25);
  // Full jitter under a bound doubling from 50 ms to 400 ms.
  waits.forEach((wait, i) => expect(wait).toBeLessThanOrEqual(Math.min(400, 50 * 2 ** i)));
});
