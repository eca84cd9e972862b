import { create } from '@bufbuild/protobuf';
import type * as grpc from '@grpc/grpc-js';
import { Effect, ToolSpecSchema } from '../../gen/dispatch/v1/tool_pb';
import { WorkerMessageSchema } from '../../gen/dispatch/v1/worker_pb';
import { createWorkerClient } from '../../src/client';
import { startWorkerApp, type WorkerApp } from './worker-app';

// A worker whose hello is registered once the replica has begun to drain (its stream opened
// before SIGTERM; its schema still compiling, or its hello on the wire) was added to the drained
// pool as if nothing happened: its tools were announced hosted again (routes advertised to other
// replicas, which then sent it calls this replica refuses), and its stream, holding no call, was
// never ended, so the shutdown waited out its whole grace period. A stream with no hello yet when
// the drain began was in no pool at all: the shutdown waited for its hello timeout (15 s) or the
// grace, whichever came first.
const tool = { name: 'w_late', inputSchema: '{"type":"object"}', effect: Effect.READ_ONLY };

/** Opens a Work stream on `t` and waits until the server has it; its status once it ends. */
async function openStream(t: WorkerApp, client: ReturnType<typeof createWorkerClient>) {
  const call = client.work({});
  const ended = new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
  call.on('error', () => undefined);
  call.on('data', () => undefined);
  // The stream is open (a heartbeat before hello is read and ignored).
  call.write(create(WorkerMessageSchema, { msg: { case: 'heartbeat', value: {} } }));
  await new Promise((r) => setTimeout(r, 200));
  /** The stream's status, or undefined if it has not ended within 3 s. */
  const endedSoon = async () => {
    let timer: NodeJS.Timeout | undefined;
    const status = await Promise.race([ended, new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), 3_000)))]);
    clearTimeout(timer);
    return status;
  };
  return { call, endedSoon };
}

test('a hello registered while the replica drains ends its stream at once, and shutdown does not wait out the grace', async () => {
  const t = await startWorkerApp();
  const client = createWorkerClient(t.address);
  try {
    const { call, endedSoon } = await openStream(t, client);
    // The schema compiler's thread started (80-300 ms, seconds on a loaded host), so that the
    // hello's compile is not what the close races.
    await t.registry.registerTools({ tools: [create(ToolSpecSchema, { ...tool, name: 'warm_up', executor: { case: 'builtin', value: { name: 'echo' } } })] });
    const registered: string[] = [];
    t.app.deps.registry.onChange((change) => void (change.type === 'register' && registered.push(...change.specs.map((s) => s.name))));
    // The drain begins as the server reads the hello, its schema still to compile. (Closing as the
    // test writes it raced the hello's read: under load the drain came first, and the stream, with
    // no hello read, was ended without it: nothing registered.)
    const registry = t.app.deps.registry;
    const registerAsync = registry.registerAsync.bind(registry);
    let closing: Promise<void> | undefined;
    let started = 0;
    registry.registerAsync = (specs, options) => {
      started = Date.now();
      closing = t.app.close(10_000);
      return registerAsync(specs, options);
    };
    call.write(create(WorkerMessageSchema, { msg: { case: 'hello', value: { workerId: 'late', tools: [create(ToolSpecSchema, tool)] } } }));
    expect((await endedSoon())?.code).toBe(0);
    expect(closing).toBeDefined();
    await closing;
    expect(Date.now() - started).toBeLessThan(3_000);
    // The hello was read and its tools registered (they stay, as a worker's do when it leaves).
    expect(registered).toEqual(['w_late']);
  } finally {
    client.close();
    await t.close();
  }
}, 20_000);

test('a Work stream with no hello yet ends when the replica drains, and shutdown does not wait out the grace', async () => {
  const t = await startWorkerApp();
  const client = createWorkerClient(t.address);
  try {
    const { endedSoon } = await openStream(t, client);
    const started = Date.now();
    const closing = t.app.close(10_000);
    // OK, as the pool ends its workers' streams when it drains: the worker connects again, elsewhere.
    expect((await endedSoon())?.code).toBe(0);
    await closing;
    // Before: ~10.5 s, the grace.
    expect(Date.now() - started).toBeLessThan(3_000);
  } finally {
    client.close();
    await t.close();
  }
}, 20_000);

test('a Work stream opened while the replica drains is refused at once', async () => {
  const t = await startWorkerApp();
  const client = createWorkerClient(t.address);
  try {
    // One stream open keeps the server from closing before the second is opened.
    await openStream(t, client);
    const closing = t.app.close(2_000);
    await new Promise((r) => setTimeout(r, 50));
    const started = Date.now();
    const { endedSoon } = await openStream(t, client);
    expect((await endedSoon())?.code).toBeDefined();
    expect(Date.now() - started).toBeLessThan(1_500);
    await closing;
  } finally {
    client.close();
    await t.close();
  }
}, 20_000);
