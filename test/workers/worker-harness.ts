import { create, type MessageInitShape } from '@bufbuild/protobuf';
import type * as grpc from '@grpc/grpc-js';
import { ToolSpecSchema } from '../../gen/dispatch/v1/tool_pb';
import { WorkerMessageSchema, type WorkAssignment } from '../../gen/dispatch/v1/worker_pb';
import { createWorkerClient } from '../../src/client';

/** How a test worker answers an assignment; undefined leaves it unanswered. */
export type Answer = (assignment: WorkAssignment) => Promise<AnswerSent | undefined> | AnswerSent | undefined;

/** A completion's content: `retryAfterMs` with `isError`, the tool did not run the call, for now. */
export interface AnswerSent {
  readonly output: string;
  readonly isError?: boolean;
  readonly retryAfterMs?: number;
}

/** A worker process stand-in holding a real Work stream to dispatch. */
export interface TestWorker {
  readonly id: string;
  /** Assignments received (cancels excluded). */
  readonly assignments: WorkAssignment[];
  /** Assignment ids dispatch cancelled. */
  readonly cancels: string[];
  /** The stream's final status, once dispatch or the worker ended it. */
  readonly ended: Promise<grpc.StatusObject>;
  complete(assignmentId: string, output: string, isError?: boolean, retryAfterMs?: number): void;
  stopHeartbeats(): void;
  /** Drops the stream abruptly, as a crashed worker would. */
  disconnect(): void;
  /** Half-closes the stream, as a worker shutting down cleanly would. */
  close(): Promise<void>;
  /** Says it is stopping (a Drain): dispatch sends it no new assignment. */
  drain(): void;
}

/** Options of a test worker. */
export interface TestWorkerOptions {
  readonly id: string;
  readonly tools: MessageInitShape<typeof ToolSpecSchema>[];
  readonly answer?: Answer;
  /** @default 200 */
  readonly heartbeatMs?: number;
  readonly metadata?: Record<string, string>;
}

const message = (init: MessageInitShape<typeof WorkerMessageSchema>) => create(WorkerMessageSchema, init);

/** Opens a Work stream, says hello with `tools` and answers assignments with `answer`. */
export function startWorker(address: string, options: TestWorkerOptions): TestWorker {
  const client = createWorkerClient(address);
  const call = client.work({ metadata: options.metadata });
  const assignments: WorkAssignment[] = [];
  const cancels: string[] = [];
  let open = true;
  const send = (init: MessageInitShape<typeof WorkerMessageSchema>) => {
    if (open) call.write(message(init));
  };
  const heartbeat = setInterval(() => send({ msg: { case: 'heartbeat', value: {} } }), options.heartbeatMs ?? 200);
  const ended = new Promise<grpc.StatusObject>((resolve) => {
    call.on('status', (status: grpc.StatusObject) => {
      open = false;
      clearInterval(heartbeat);
      client.close();
      resolve(status);
    });
  });
  call.on('error', () => undefined);
  const complete = (assignmentId: string, output: string, isError = false, retryAfterMs = 0) => send({ msg: { case: 'completion', value: { assignmentId, output, isError, errorMessage: isError ? output : '', retryAfterMs } } });
  call.on('data', (assignment: WorkAssignment) => {
    if (assignment.cancel) return void cancels.push(assignment.assignmentId);
    assignments.push(assignment);
    Promise.resolve(options.answer?.(assignment)).then((answer) => answer && complete(assignment.assignmentId, answer.output, answer.isError, answer.retryAfterMs));
  });
  send({ msg: { case: 'hello', value: { workerId: options.id, tools: options.tools.map((t) => create(ToolSpecSchema, t)) } } });
  return {
    id: options.id,
    assignments,
    cancels,
    ended,
    complete,
    stopHeartbeats: () => clearInterval(heartbeat),
    disconnect() {
      open = false;
      clearInterval(heartbeat);
      call.cancel();
    },
    async close() {
      if (open) call.end();
      await ended;
    },
    drain: () => send({ msg: { case: 'drain', value: {} } }),
  };
}

/** Echoes the call's arguments, tagged with the worker id. */
export const echoAnswer = (id: string): Answer => (a) => ({ output: JSON.stringify({ worker: id, args: JSON.parse(a.call?.arguments ?? '{}') as unknown }) });

/** Waits until `check` holds, polling every 20 ms, for at most `ms`. */
export async function eventually(check: () => boolean | Promise<boolean>, ms = 5_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Config for tests that poll a worker-hosted tool (`w_count` unless named) until a new worker
 * process takes calls: each poll before it connects fails "no worker is connected", which counts
 * for the tool's breaker, and on a loaded machine (CI) enough polls failed to open it; the polls
 * then met BREAKER_OPEN for its 30 s and the wait timed out. Its breaker here never opens.
 */
export const readyPollsKeepBreakerClosed = (tool = 'w_count'): string => `policies:\n  - { match: [${tool}], breaker: { consecutive_failures: 100000, min_calls: 100000 } }\n`;
