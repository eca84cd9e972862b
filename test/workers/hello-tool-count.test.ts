// A worker hosting more tools than its tenant may own (limits.max_tools_per_tenant) was refused
// RESOURCE_EXHAUSTED, which workers retry: the example worker reconnected about 28 times in 6 s,
// forever, with no tool registered. A hello whose distinct tool names alone are over the limit is
// now INVALID_ARGUMENT, naming the count, and the example worker stops at once; a hello over only
// with the tenant's other tools stays RESOURCE_EXHAUSTED (room may be freed).
import { status } from '@grpc/grpc-js';
import { keepWorking, type HostedTool } from '../../examples/typescript/worker';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startWorkerApp, type WorkerApp } from './worker-app';
import { startWorker } from './worker-harness';

jest.setTimeout(30_000);

const tool = (name: string) => ({ name, effect: Effect.READ_ONLY, description: 'd', inputSchema: '{"type":"object"}' });
const names = async (t: WorkerApp) => (await t.registry.listTools({})).tools.map((x) => x.name);

let t: WorkerApp;
beforeEach(async () => {
  t = await startWorkerApp({}, { yaml: 'limits: { max_tools_per_tenant: 2 }\n' });
});
afterEach(() => t.close());

test('a hello of more distinct tools than a tenant may own is INVALID_ARGUMENT naming the count; none registered', async () => {
  const ended = await startWorker(t.address, { id: 'many', tools: [tool('w_a'), tool('w_b'), tool('w_c')] }).ended;
  expect(ended.code).toBe(status.INVALID_ARGUMENT);
  expect(ended.details).toBe(
    'hello declares 3 distinct tool names, 1 over the limit of 2 tools a tenant may own (limits.max_tools_per_tenant): no retry can register them. ' +
      'Host at most 2 tools on one worker, or raise the limit',
  );
  expect(await names(t)).toEqual([]);
});

test('the example worker stops at once: one stream, no retry', async () => {
  const hosted: Record<string, HostedTool> = Object.fromEntries(['w_a', 'w_b', 'w_c'].map((name) => [name, { spec: tool(name), run: () => 'ok' }]));
  const log: string[] = [];
  const worker = keepWorking({ address: t.address, tools: hosted, workerId: 'ex', initialBackoffMs: 50, maxBackoffMs: 400, log: (line) => log.push(line) });
  let timer: NodeJS.Timeout | undefined;
  const ended = await Promise.race([worker.done, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), 3000)))]);
  clearTimeout(timer);
  worker.stop();
  await worker.done;
  expect(ended?.code).toBe(status.INVALID_ARGUMENT);
  expect(log.filter((line) => line.startsWith('stream ended'))).toEqual([]);
});

test("a hello within the limit alone but over it with the tenant's other tools stays RESOURCE_EXHAUSTED", async () => {
  await t.worker({ id: 'first', tools: [tool('w_first')] });
  const ended = await startWorker(t.address, { id: 'second', tools: [tool('w_a'), tool('w_b')] }).ended;
  expect(ended.code).toBe(status.RESOURCE_EXHAUSTED);
  expect(ended.details).toBe('tenant "default" would have 3 tools, over the limit of 2 (limits.max_tools_per_tenant); remove tools it no longer uses');
  expect(await names(t)).toEqual(['w_first']);
});
