import { create, fromBinary, toBinary, type MessageInitShape } from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { WorkAssignmentSchema, WorkerMessageSchema, type WorkAssignment } from '../../gen/dispatch/v1/worker_pb';
import { OVERSIZED_ANSWER_SUGGESTION } from '../../src/executors/worker/stream-end';
import type { Logger } from '../../src/log';
import { startWorkerApp, type WorkerApp } from './worker-app';
import { eventually } from './worker-harness';

// A worker answering with a string that is not valid UTF-8 (the bytes ff fe in `output`) had its
// stream ended INVALID_ARGUMENT (MALFORMED_REQUEST), rightly, but its calls were told it
// "disconnected", recoverable: a read-only call was retried, a side-effecting one told to call
// again later, and the log had only an info line "worker disconnected". Such an answer is now told
// as an oversized one is: what the worker sent, not recoverable, a suggestion that does not invite
// the same call again, and a warning naming the worker and why. An oversized answer's suggestion
// said "The tool could not be reached; it is safe to call again later", against its own
// `recoverable: false`.

jest.setTimeout(30_000);

const lines: { level: string; message: string; fields: Record<string, unknown> }[] = [];
const record = (level: string) => (message: string, fields: Record<string, unknown> = {}) => void lines.push({ level, message, fields });
const logger: Logger = { debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error') };

const report = { name: 'w_report', inputSchema: '{"type":"object"}', effect: Effect.READ_ONLY, retry: { maxAttempts: 3, initialBackoffMs: 20 } };
const pay = { name: 'w_pay', inputSchema: '{"type":"object"}', effect: Effect.SIDE_EFFECT, timeoutMs: 5_000 };

/** A length-delimited protobuf field `field` holding `bytes` as they are. */
function lengthDelimited(field: number, bytes: Buffer): Buffer {
  const head = [(field << 3) | 2];
  for (let n = bytes.length; ; n >>= 7) {
    if (n < 128) {
      head.push(n);
      break;
    }
    head.push((n & 127) | 128);
  }
  return Buffer.concat([Buffer.from(head), bytes]);
}

/** A WorkerMessage with a completion of `assignmentId` whose output holds the bytes ff fe (invalid UTF-8). */
const badCompletion = (assignmentId: string): Buffer => lengthDelimited(2, Buffer.concat([lengthDelimited(1, Buffer.from(assignmentId)), lengthDelimited(2, Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]))]));

/**
 * A worker writing raw bytes on its Work stream (no library would encode invalid UTF-8): it says
 * hello, heartbeats, and answers the assignments of `answered` with a malformed completion.
 */
function rawWorker(address: string, id: string, answered: string) {
  const client = new grpc.Client(address, grpc.credentials.createInsecure());
  const call = client.makeBidiStreamRequest<Buffer, WorkAssignment>('/dispatch.v1.WorkerService/Work', (bytes) => bytes, (bytes) => fromBinary(WorkAssignmentSchema, bytes));
  const send = (init: MessageInitShape<typeof WorkerMessageSchema>) => call.write(Buffer.from(toBinary(WorkerMessageSchema, create(WorkerMessageSchema, init))));
  const assignments: WorkAssignment[] = [];
  const heartbeat = setInterval(() => send({ msg: { case: 'heartbeat', value: {} } }), 200);
  const ended = new Promise<grpc.StatusObject>((resolve) =>
    call.on('status', (status: grpc.StatusObject) => {
      clearInterval(heartbeat);
      resolve(status);
    }),
  );
  call.on('error', () => undefined);
  call.on('data', (assignment: WorkAssignment) => {
    if (assignment.cancel) return;
    assignments.push(assignment);
    if (assignment.call?.name === answered) call.write(badCompletion(assignment.assignmentId));
  });
  send({ msg: { case: 'hello', value: { workerId: id, tools: [report, pay] } } });
  return {
    assignments,
    ended,
    close() {
      clearInterval(heartbeat);
      call.cancel();
      client.close();
    },
  };
}

describe("a worker's answer dispatch cannot take", () => {
  let t: WorkerApp;
  beforeEach(async () => {
    lines.length = 0;
    t = await startWorkerApp({}, { logger });
  });
  afterEach(() => t.close());

  it('not valid UTF-8: the calls it held fail saying so, not recoverable, the read-only one not retried, and a warning names the worker', async () => {
    const worker = rawWorker(t.address, 'bad-utf8', 'w_report');
    try {
      await eventually(() => lines.some((line) => line.message === 'worker connected'), 5_000, 'the worker connected');
      const paying = t.dispatch.dispatch({ sessionId: 'p', calls: [{ id: 'p1', name: 'w_pay', arguments: '{}' }] });
      await eventually(() => worker.assignments.length === 1, 5_000, 'the pay assignment');
      const reported = (await t.dispatch.dispatch({ sessionId: 'r', calls: [{ id: 'r1', name: 'w_report', arguments: '{}' }] })).results[0]!;
      const why = /^worker "bad-utf8" hosting "w_(report|pay)" sent a message dispatch could not decode \(not a valid dispatch\.v1\.WorkerMessage \(protobuf or UTF-8\): [^)]*UTF-8[^)]*\) while running the call; a worker's messages must be valid protobuf/;
      expect(reported.error?.kind).toBe(ErrorKind.UNAVAILABLE);
      expect(reported.error?.message).toMatch(why);
      expect(reported.error?.message).not.toMatch(/disconnected/);
      expect(reported.error?.recoverable).toBe(false);
      // Two calls held: which one's answer it was is not known, and each is told so (oversized-completion-shared.test.ts).
      expect(reported.error?.suggestion).toMatch(/^The tool's worker sent an answer unreadable \(malformed\), for this call or another it was running at the same time/);
      expect(reported.attempts).toBe(1);
      const paid = (await paying).results[0]!;
      expect(paid.error?.message).toMatch(why);
      expect(paid.error?.recoverable).toBe(false);
      expect(paid.error?.suggestion).toMatch(/for this call or another it was running at the same time/);
      expect((await worker.ended).code).toBe(grpc.status.INVALID_ARGUMENT);
      const ends = lines.filter((line) => line.fields.worker === 'bad-utf8' && line.message !== 'worker connected');
      expect(ends).toEqual([
        {
          level: 'warn',
          message: 'worker stream ended: its message could not be decoded',
          fields: expect.objectContaining({ worker: 'bad-utf8', tenant: 'default', reason: 'MALFORMED_REQUEST', details: expect.stringContaining('UTF-8') }),
        },
      ]);
    } finally {
      worker.close();
    }
  });

  it('over max_message_bytes: the suggestion agrees with recoverable false, and a warning names the worker', async () => {
    const worker = await t.worker({ id: 'big', tools: [report], answer: () => ({ output: 'r'.repeat(4.5 * 1024 * 1024) }) });
    const reported = (await t.dispatch.dispatch({ sessionId: 'r', calls: [{ id: 'r1', name: 'w_report', arguments: '{}' }] })).results[0]!;
    expect(reported.error?.message).toMatch(/^worker "big" hosting "w_report" sent a message \(\d+ bytes\) larger than max_message_bytes \(4 MiB\)/);
    expect(reported.error?.recoverable).toBe(false);
    expect(reported.error?.suggestion).toBe(OVERSIZED_ANSWER_SUGGESTION);
    expect(reported.error?.suggestion).not.toMatch(/safe to call again/);
    expect(JSON.parse(reported.output)).toMatchObject({ recoverable: false, suggestion: OVERSIZED_ANSWER_SUGGESTION });
    await worker.ended;
    await eventually(() => lines.some((line) => line.fields.worker === 'big' && line.level === 'warn'), 5_000, 'the warning');
    expect(lines.find((line) => line.fields.worker === 'big' && line.level === 'warn')).toMatchObject({ message: 'worker stream ended: its message was larger than max_message_bytes', fields: { tenant: 'default', max_message_bytes: 4 * 1024 * 1024 } });
    expect(lines.some((line) => line.fields.worker === 'big' && line.message === 'worker disconnected')).toBe(false);
  });
});
