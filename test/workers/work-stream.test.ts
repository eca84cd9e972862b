import { create } from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { WorkerMessageSchema } from '../../gen/dispatch/v1/worker_pb';
import { createWorkerClient } from '../../src/client';
import type { Plugin } from '../../src/app';
import { RpcError } from '../../src/server';
import { startWorkerApp, type WorkerApp } from './worker-app';
import { echoAnswer, startWorker } from './worker-harness';

const SCHEMA = JSON.stringify({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] });
const echoTool = { name: 'w_echo', description: 'echo', inputSchema: SCHEMA, effect: Effect.READ_ONLY };

describe('WorkerService.Work', () => {
  let t: WorkerApp;
  beforeEach(async () => {
    t = await startWorkerApp();
  });
  afterEach(() => t.close());

  it('registers the hello tools with the worker executor and ListTools shows them', async () => {
    await t.worker({ id: 'w1', tools: [echoTool], answer: echoAnswer('w1') });
    const { tools } = await t.registry.listTools({});
    const tool = tools.find((x) => x.name === 'w_echo');
    expect(tool?.executor.case).toBe('worker');
    expect(tool?.effect).toBe(Effect.READ_ONLY);
  });

  it('sends an assignment with the call, session, attempt, idempotency key, deadline and traceparent; the completion is the output', async () => {
    const worker = await t.worker({ id: 'w1', tools: [{ ...echoTool, timeoutMs: 5_000 }], answer: echoAnswer('w1') });
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const before = Date.now();
    const { results } = await t.dispatch.dispatch({ sessionId: 's1', calls: [{ id: 'c1', name: 'w_echo', arguments: '{"text":"hi"}' }] }, { metadata: { traceparent } });
    expect(results[0]!.isError).toBe(false);
    expect(JSON.parse(results[0]!.output)).toEqual({ worker: 'w1', args: { text: 'hi' } });
    const a = worker.assignments[0]!;
    expect(a.call?.id).toBe('c1');
    expect(a.call?.name).toBe('w_echo');
    expect(a.sessionId).toBe('s1');
    expect(a.attempt).toBe(1);
    expect(a.idempotencyKey).toMatch(/\S{16,}/);
    expect(Number(a.deadlineMs)).toBeGreaterThanOrEqual(before + 5_000);
    expect(Number(a.deadlineMs)).toBeLessThan(Date.now() + 5_000 + 1_000);
    expect(a.traceparent).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-/);
  });

  it('turns an is_error completion into a TOOL_ERROR that is not retried', async () => {
    const worker = await t.worker({ id: 'w1', tools: [echoTool], answer: () => ({ output: 'disk full', isError: true }) });
    const { results } = await t.dispatch.dispatch({ sessionId: 's1', calls: [{ id: 'c1', name: 'w_echo', arguments: '{"text":"x"}' }] });
    const r = results[0]!;
    expect(r.isError).toBe(true);
    expect(r.error?.kind).toBe(ErrorKind.TOOL_ERROR);
    expect(r.error?.message).toBe('tool "w_echo" reported an error: disk full');
    expect(r.attempts).toBe(1);
    expect(worker.assignments).toHaveLength(1);
  });

  it('re-registering identical specs from a second worker is accepted', async () => {
    await t.worker({ id: 'w1', tools: [echoTool], answer: echoAnswer('w1') });
    const second = await t.worker({ id: 'w2', tools: [echoTool], answer: echoAnswer('w2') });
    expect(second.assignments).toHaveLength(0);
    const { tools } = await t.registry.listTools({});
    expect(tools.filter((x) => x.name === 'w_echo')).toHaveLength(1);
  });

  it('refuses a hello with a bad spec, naming the tool', async () => {
    const worker = startWorker(t.address, { id: 'bad', tools: [{ name: 'w_bad', inputSchema: '{"type": 3}' }] });
    const status = await worker.ended;
    expect(status.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(status.details).toContain('w_bad');
  });

  it('refuses a spec naming another executor', async () => {
    const worker = startWorker(t.address, { id: 'bad', tools: [{ name: 'w_http', executor: { case: 'http', value: { url: 'http://127.0.0.1:1/' } } }] });
    const status = await worker.ended;
    expect(status.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(status.details).toBe('tools[0] ("w_http"): a worker hosts its tools itself, so the executor must be worker or unset, not http');
  });

  it('refuses a hello with no tools', async () => {
    const worker = startWorker(t.address, { id: 'x', tools: [] });
    const status = await worker.ended;
    expect(status.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(status.details).toBe('hello declares no tools; a worker must host at least one');
  });
});

describe('WorkerService.Work protocol errors', () => {
  it('ends a stream that sends a completion before hello', async () => {
    const t = await startWorkerApp();
    const client = createWorkerClient(t.address);
    try {
      const call = client.work();
      call.on('error', () => undefined);
      const status = new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
      call.write(create(WorkerMessageSchema, { msg: { case: 'completion', value: { assignmentId: 'nope', output: 'x' } } }));
      expect((await status).code).toBe(grpc.status.FAILED_PRECONDITION);
      expect((await status).details).toBe('a completion arrived before hello');
    } finally {
      client.close();
      await t.close();
    }
  });

  it('ends a hello that would give its tenant more tools than limits.max_tools_per_tenant, RESOURCE_EXHAUSTED, registering none', async () => {
    const t = await startWorkerApp({}, { yaml: 'limits: { max_tools_per_tenant: 3 }\n' });
    try {
      await t.worker({ id: 'w1', tools: [1, 2].map((n) => ({ ...echoTool, name: `w_${n}` })) });
      const second = startWorker(t.address, { id: 'w2', tools: [3, 4].map((n) => ({ ...echoTool, name: `w_${n}` })) });
      const status = await second.ended;
      expect(status.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
      expect(status.details).toBe('tenant "default" would have 4 tools, over the limit of 3 (limits.max_tools_per_tenant); remove tools it no longer uses');
      expect((await t.registry.listTools({})).tools.map((x) => x.name).sort()).toEqual(['w_1', 'w_2']);
      // Hosting the same tools again (a restarted worker) counts them once.
      await t.worker({ id: 'w1-again', tools: [1, 2].map((n) => ({ ...echoTool, name: `w_${n}` })) });
    } finally {
      await t.close();
    }
  });

  it('ends a stream that never says hello after the heartbeat timeout', async () => {
    const t = await startWorkerApp({ heartbeatTimeoutMs: 300 });
    const client = createWorkerClient(t.address);
    try {
      const call = client.work();
      call.on('error', () => undefined);
      const status = await new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
      expect(status.code).toBe(grpc.status.DEADLINE_EXCEEDED);
      expect(status.details).toBe('no hello within 300 ms');
    } finally {
      client.close();
      await t.close();
    }
  });
});

describe('WorkerService.Work authentication', () => {
  it('asks the app authenticator for the worker scope', async () => {
    const scopes: string[] = [];
    const denyWorkers = async (): Promise<Plugin> => ({
      name: 'deny-workers',
      authenticate: (_call, scope) => {
        scopes.push(scope);
        if (scope === 'worker') throw new RpcError(grpc.status.PERMISSION_DENIED, 'this token may not host tools (scope worker)');
        return { tenant: 'default', scopes: new Set([scope]) };
      },
    });
    const t = await startWorkerApp({}, { only: true, plugins: [denyWorkers] });
    try {
      const worker = startWorker(t.address, { id: 'w1', tools: [echoTool] });
      const status = await worker.ended;
      expect(status.code).toBe(grpc.status.PERMISSION_DENIED);
      expect(status.details).toBe('this token may not host tools (scope worker)');
      expect(scopes).toContain('worker');
    } finally {
      await t.close();
    }
  });
});

describe('WorkerService.Work tenancy', () => {
  it('registers a worker tool for the worker tenant only', async () => {
    const byHeader = async (): Promise<Plugin> => ({
      name: 'tenant-by-header',
      authenticate: (call, scope) => ({ tenant: String(call.metadata.get('x-tenant')[0] ?? 'none'), scopes: new Set([scope]) }),
    });
    const t = await startWorkerApp({}, { only: true, plugins: [byHeader] });
    try {
      await t.worker({ id: 'w1', tools: [echoTool], answer: echoAnswer('w1'), metadata: { 'x-tenant': 'acme' } });
      const as = (tenant: string) => ({ metadata: { 'x-tenant': tenant } });
      expect((await t.registry.listTools({}, as('acme'))).tools.map((x) => x.name)).toContain('w_echo');
      expect((await t.registry.listTools({}, as('other'))).tools.map((x) => x.name)).not.toContain('w_echo');
      const call = { sessionId: 's', calls: [{ id: 'c', name: 'w_echo', arguments: '{"text":"t"}' }] };
      expect((await t.dispatch.dispatch(call, as('other'))).results[0]!.error?.kind).toBe(ErrorKind.UNKNOWN_TOOL);
      expect((await t.dispatch.dispatch(call, as('acme'))).results[0]!.isError).toBe(false);
    } finally {
      await t.close();
    }
  });
});
