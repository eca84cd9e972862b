import { create, type MessageInitShape } from '@bufbuild/protobuf';
import { status as Status, type StatusObject } from '@grpc/grpc-js';
import { Effect, ToolSpecSchema } from '../../gen/dispatch/v1/tool_pb';
import { WorkerMessageSchema, type WorkAssignment, type WorkerMessage } from '../../gen/dispatch/v1/worker_pb';
import { createWorkerClient } from '../../src/client';
import { settingsFrom } from './backend';

/** How long a stream stays open after hello before the worker says it is hosting (see runWorker). */
const ACCEPTED_AFTER_MS = 1_000;

/** A tool this worker hosts: its spec and its implementation. */
export interface HostedTool {
  readonly spec: MessageInitShape<typeof ToolSpecSchema>;
  run(args: Record<string, unknown>): Promise<string> | string;
}

const TOOLS: Record<string, HostedTool> = {
  ts_reverse: {
    spec: {
      name: 'ts_reverse',
      description: 'Reverses a text (hosted by a TypeScript worker).',
      inputSchema: JSON.stringify({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false }),
      effect: Effect.READ_ONLY,
      concurrencySafe: true,
      timeoutMs: 5_000,
    },
    run: (args) => [...String(args.text)].reverse().join(''),
  },
};

/**
 * The assignments of one stream not yet answered, and which of them dispatch cancelled. A cancel
 * for any other (answered already: the completion and the cancel crossed) is dropped, so neither
 * set outgrows the assignments in progress (examples/python/worker.py keeps the same).
 */
export class Assignments {
  private readonly open = new Set<string>();
  private readonly cancelledIds = new Set<string>();

  start(assignmentId: string): void {
    this.open.add(assignmentId);
  }

  /** Marks an open assignment cancelled; false when it is not open. */
  cancel(assignmentId: string): boolean {
    if (!this.open.has(assignmentId)) return false;
    this.cancelledIds.add(assignmentId);
    return true;
  }

  /** Forgets an assignment; true when it was cancelled (its completion is not sent). */
  finish(assignmentId: string): boolean {
    this.open.delete(assignmentId);
    return this.cancelledIds.delete(assignmentId);
  }

  /** How many ids are held. */
  sizes(): { open: number; cancelled: number } {
    return { open: this.open.size, cancelled: this.cancelledIds.size };
  }
}

/** Options of the example worker. */
export interface WorkerOptions {
  readonly address: string;
  /** The tools hosted. @default ts_reverse */
  readonly tools?: Readonly<Record<string, HostedTool>>;
  /** @default 'ts-worker' */
  readonly workerId?: string;
  /** Heartbeat period; dispatch drops a worker silent for 15 s. @default 2000 */
  readonly heartbeatMs?: number;
  readonly token?: string;
  readonly log?: (line: string) => void;
}

/** A running worker: `stop` drains it, then half-closes its stream; `done` settles when the stream has ended. */
export interface RunningWorker {
  stop(): void;
  readonly done: Promise<StatusObject>;
}

/** A worker on one stream: also what it holds of that stream's assignments. */
export interface StreamWorker extends RunningWorker {
  held(): { open: number; cancelled: number };
}

/**
 * Hosts TOOLS on a WorkerService.Work stream: says hello with their specs, heartbeats, runs each
 * assignment and answers a completion (a thrown error becomes is_error), and drops the answer of
 * an assignment dispatch cancelled.
 */
export function runWorker(options: WorkerOptions): StreamWorker {
  const log = options.log ?? ((line: string) => console.log(line));
  const hosted = options.tools ?? TOOLS;
  const client = createWorkerClient(options.address);
  const stream = client.work({ metadata: options.token ? { authorization: `Bearer ${options.token}` } : undefined });
  const assignments = new Assignments();
  let open = true;
  const send = (message: WorkerMessage) => open && stream.write(message);
  const heartbeat = setInterval(() => send(create(WorkerMessageSchema, { msg: { case: 'heartbeat', value: {} } })), options.heartbeatMs ?? 2_000);

  async function handle(assignment: WorkAssignment): Promise<void> {
    const name = assignment.call?.name ?? '';
    let output: string;
    let isError = false;
    try {
      const tool = hosted[name];
      if (!tool) throw new Error(`this worker does not host ${name}`);
      output = await tool.run(JSON.parse(assignment.call?.arguments ?? '{}') as Record<string, unknown>);
    } catch (error) {
      output = (error as Error).message;
      isError = true;
    }
    if (assignments.finish(assignment.assignmentId)) return;
    send(create(WorkerMessageSchema, { msg: { case: 'completion', value: { assignmentId: assignment.assignmentId, output, isError, errorMessage: isError ? output : '' } } }));
    log(`completed ${name} call=${assignment.call?.id} attempt=${assignment.attempt} error=${isError}`);
  }

  // dispatch sends nothing when it accepts a hello, and refuses one at once: a stream still open
  // ACCEPTED_AFTER_MS after hello, or one an assignment came on, is taken as accepted.
  let announced = false;
  const accepted = () => {
    if (!open || announced) return;
    announced = true;
    log(`worker ${options.workerId ?? 'ts-worker'} hosting ${Object.keys(hosted).join(', ')} on ${options.address}`);
  };
  const acceptedTimer = setTimeout(accepted, ACCEPTED_AFTER_MS);

  stream.on('data', (assignment: WorkAssignment) => {
    accepted();
    if (assignment.cancel) {
      if (assignments.cancel(assignment.assignmentId)) log(`cancelled ${assignment.assignmentId}`);
    } else {
      assignments.start(assignment.assignmentId);
      void handle(assignment);
    }
  });
  stream.on('error', () => undefined);
  const done = new Promise<StatusObject>((resolve) =>
    stream.on('status', (status: StatusObject) => {
      open = false;
      clearInterval(heartbeat);
      clearTimeout(acceptedTimer);
      client.close();
      resolve(status);
    }),
  );
  const tools = Object.values(hosted).map((t) => create(ToolSpecSchema, t.spec));
  send(create(WorkerMessageSchema, { msg: { case: 'hello', value: { workerId: options.workerId ?? 'ts-worker', tools } } }));
  return {
    // Drain: dispatch sends nothing new; the stream is half-closed once every held call is
    // answered (at most DRAIN_MS), so no call is cut off as "disconnected" (worker.proto, Drain).
    stop() {
      if (!open) return;
      send(create(WorkerMessageSchema, { msg: { case: 'drain', value: {} } }));
      const until = Date.now() + DRAIN_MS;
      const poll = setInterval(() => {
        if (open && assignments.sizes().open > 0 && Date.now() < until) return;
        clearInterval(poll);
        if (open) stream.end();
      }, 50);
    },
    done,
    held: () => assignments.sizes(),
  };
}

/** The longest a stopping worker waits for its held calls before it half-closes its stream. */
const DRAIN_MS = 30_000;

/**
 * Stream endings that another try would meet again: the worker stops instead. ALREADY_EXISTS:
 * another owner's tool has one of these names; FAILED_PRECONDITION: the protocol was broken.
 */
const FINAL = new Set([Status.UNAUTHENTICATED, Status.PERMISSION_DENIED, Status.INVALID_ARGUMENT, Status.UNIMPLEMENTED, Status.ALREADY_EXISTS, Status.FAILED_PRECONDITION]);

/** Options of {@link keepWorking}: those of runWorker, and the wait between streams. */
export interface KeepWorkingOptions extends WorkerOptions {
  /** The longest first wait before a new stream; it doubles per stream that ends, up to maxBackoffMs. @default 500 */
  readonly initialBackoffMs?: number;
  /** @default 10000 */
  readonly maxBackoffMs?: number;
}

/**
 * Runs the worker, on a new stream whenever its stream ends other than by `stop`: dispatchd
 * restarted or drained (a rolling update), the connection lost. Behind a Kubernetes Service the
 * new stream reaches a replica that is up. The wait before each new stream is drawn at random up
 * to a bound that doubles from `initialBackoffMs` to `maxBackoffMs` (full jitter, so workers
 * cut off together do not come back together), and starts over after a stream that lasted a
 * minute. A stream refused for a reason another try would meet again (authentication, permission,
 * an invalid hello, a tool name taken) ends it; `done` settles with the last stream's status.
 */
export function keepWorking(options: KeepWorkingOptions): RunningWorker {
  const log = options.log ?? ((line: string) => console.log(line));
  const initial = options.initialBackoffMs ?? 500;
  const max = options.maxBackoffMs ?? 10_000;
  let stopped = false;
  let current: RunningWorker | undefined;
  let wake: (() => void) | undefined;
  const done = (async () => {
    let bound = initial;
    for (;;) {
      const opened = Date.now();
      current = runWorker(options);
      const status = await current.done;
      if (stopped || FINAL.has(status.code)) return status;
      if (Date.now() - opened >= 60_000) bound = initial;
      const wait = Math.round(Math.random() * bound);
      log(`stream ended (${Status[status.code]}: ${status.details}); a new one in ${wait} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        wake = () => (clearTimeout(timer), resolve());
      });
      wake = undefined;
      if (stopped) return status;
      bound = Math.min(max, bound * 2);
    }
  })();
  return {
    stop() {
      stopped = true;
      current?.stop();
      wake?.();
    },
    done,
  };
}

if (require.main === module) {
  const { address, token } = settingsFrom(process.env);
  const worker = keepWorking({ address: process.argv[2] ?? address, workerId: process.argv[3], token });
  process.once('SIGTERM', () => worker.stop());
  process.once('SIGINT', () => worker.stop());
  worker.done.then((status) => {
    if (status.code === Status.OK) console.log('worker stopped: ok');
    else console.error(`worker stopped: ${Status[status.code]}: ${status.details}`);
    process.exitCode = status.code === Status.OK ? 0 : 1;
  });
}
