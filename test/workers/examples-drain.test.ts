import * as grpc from '@grpc/grpc-js';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { runWorker, type HostedTool } from '../../examples/typescript/worker';
import { startApp } from '../helpers/servers';
import { eventually } from './worker-harness';

// The example worker stopped by half-closing its stream at once (SIGTERM), which failed the calls
// it held ("disconnected"; a side-effecting one's outcome unknown) though it went on running them:
// every rolling update of a fleet of such workers. It now drains (worker.proto, Drain): the call
// it holds is answered, a new one goes elsewhere or is refused, not executed, then it half-closes.

test('stop() while a side-effecting call runs: that call is answered; a new one is refused, not run; the stream ends OK', async () => {
  const t = await startApp('');
  let runs = 0;
  const slow: HostedTool = {
    spec: { name: 'ts_charge', inputSchema: '{"type":"object"}', effect: Effect.SIDE_EFFECT, timeoutMs: 10_000 },
    run: async () => {
      runs++;
      await new Promise((r) => setTimeout(r, 500));
      return 'charged';
    },
  };
  const worker = runWorker({ address: t.address, workerId: 'ts-drain', heartbeatMs: 200, tools: { ts_charge: slow }, log: () => undefined });
  try {
    await eventually(async () => (await t.registry.listTools({})).tools.some((x) => x.name === 'ts_charge'), 10_000, 'the worker');
    const held = t.dispatch.dispatch({ sessionId: 'a', calls: [{ id: 'c1', name: 'ts_charge', arguments: '{"n":1}' }] });
    await eventually(async () => runs === 1, 5_000, 'the call to start');
    worker.stop();
    await new Promise((r) => setTimeout(r, 100));
    const [refused] = (await t.dispatch.dispatch({ sessionId: 'b', calls: [{ id: 'c2', name: 'ts_charge', arguments: '{"n":2}' }] })).results;
    expect(refused!.isError).toBe(true);
    expect((await held).results[0]).toMatchObject({ isError: false, output: 'charged' });
    expect((await worker.done).code).toBe(grpc.status.OK);
    expect(runs).toBe(1);
  } finally {
    worker.stop();
    await t.close();
  }
});
