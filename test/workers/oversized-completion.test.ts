import { status } from '@grpc/grpc-js';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startWorkerApp, type WorkerApp } from './worker-app';
import { eventually } from './worker-harness';

// grpc-js refuses a message over the server's receive limit (max_message_bytes, 4 MiB by default)
// by ending the whole stream: every call the worker held fails. They used to be told the worker
// "disconnected", and a read-only one was retried into the same wall.
const report = { name: 'w_report', inputSchema: '{"type":"object"}', effect: Effect.READ_ONLY, retry: { maxAttempts: 3, initialBackoffMs: 20 } };
const pay = { name: 'w_pay', inputSchema: '{"type":"object"}', effect: Effect.SIDE_EFFECT, timeoutMs: 5_000 };
const why = /^worker "big" hosting "w_(report|pay)" sent a message \(\d+ bytes\) larger than max_message_bytes \(4 MiB\) while running the call; dispatch did not read it/;

describe("a worker's answer over max_message_bytes", () => {
  let t: WorkerApp;
  beforeEach(async () => {
    t = await startWorkerApp();
  });
  afterEach(() => t.close());

  it('fails the calls the worker held saying so, and the read-only one is not retried', async () => {
    const worker = await t.worker({
      id: 'big',
      tools: [report, pay],
      answer: (a) => (a.call?.name === 'w_report' ? { output: 'r'.repeat(4.5 * 1024 * 1024) } : undefined),
    });
    const paying = t.dispatch.dispatch({ sessionId: 'p', calls: [{ id: 'p1', name: 'w_pay', arguments: '{}' }] });
    await eventually(() => worker.assignments.length === 1, 5_000, 'the pay assignment');
    const reported = (await t.dispatch.dispatch({ sessionId: 'r', calls: [{ id: 'r1', name: 'w_report', arguments: '{}' }] })).results[0]!;
    expect(reported.error?.kind).toBe(ErrorKind.UNAVAILABLE);
    expect(reported.error?.message).toMatch(why);
    expect(reported.error?.recoverable).toBe(false);
    expect(reported.attempts).toBe(1);
    const paid = (await paying).results[0]!;
    expect(paid.error?.message).toMatch(why);
    expect(paid.error?.recoverable).toBe(false);
    expect((await worker.ended).code).toBe(status.RESOURCE_EXHAUSTED);
  });
});
