import { create } from '@bufbuild/protobuf';
import type * as grpc from '@grpc/grpc-js';
import { Effect, ToolSpecSchema } from '../../gen/dispatch/v1/tool_pb';
import { WorkerMessageSchema } from '../../gen/dispatch/v1/worker_pb';
import { createWorkerClient } from '../../src/client';
import { startWorkerApp } from './worker-app';

// A worker whose hello is registered once the replica has begun to drain (its stream opened
// before SIGTERM; its schema still compiling, or its hello on the wire) was added to the drained
// pool as if nothing happened: its tools were announced hosted again (routes advertised to other
// replicas, which then sent it calls this replica refuses), and its stream, holding no call, was
// never ended, so the shutdown waited out its whole grace period.
const tool = { name: 'w_late', inputSchema: '{"type":"object"}', effect: Effect.READ_ONLY };

test('a hello registered while the replica drains ends its stream at once, and shutdown does not wait out the grace', async () => {
  const t = await startWorkerApp();
  const client = createWorkerClient(t.address);
  try {
    const call = client.work({});
    const ended = new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
    call.on('error', () => undefined);
    call.on('data', () => undefined);
    // The stream is open (a heartbeat before hello is read and ignored).
    call.write(create(WorkerMessageSchema, { msg: { case: 'heartbeat', value: {} } }));
    await new Promise((r) => setTimeout(r, 200));
    const registered: string[] = [];
    t.app.deps.registry.onChange((change) => void (change.type === 'register' && registered.push(...change.specs.map((s) => s.name))));
    const started = Date.now();
    const closing = t.app.close(10_000);
    await new Promise((r) => setTimeout(r, 100));
    call.write(create(WorkerMessageSchema, { msg: { case: 'hello', value: { workerId: 'late', tools: [create(ToolSpecSchema, tool)] } } }));
    let timer: NodeJS.Timeout | undefined;
    const status = await Promise.race([ended, new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), 3_000)))]);
    clearTimeout(timer);
    expect(status?.code).toBe(0);
    await closing;
    expect(Date.now() - started).toBeLessThan(3_000);
    // The hello was read and its tools registered (they stay, as a worker's do when it leaves).
    expect(registered).toEqual(['w_late']);
  } finally {
    client.close();
    await t.close();
  }
}, 20_000);
