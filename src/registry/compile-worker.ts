import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { SchemaPatternBound } from './pattern-pool';
import type { SchemaCode } from './schema-codegen';

/** A schema text sent to the worker. */
export interface CompileRequest {
  readonly id: number;
  readonly text: string;
  readonly patternBound: SchemaPatternBound;
  /** See createSchemaCodegen. */
  readonly checkMistakes?: boolean;
}

/** What the worker posts once it can compile (its modules loaded): a compile's time counts from then. */
export const WORKER_READY = 'ready';

/** The code a worker sends: its module alone (the main thread has no use for Ajv's source as made). */
export type SentCode = Omit<SchemaCode, 'source'>;

/** The worker's answer: the code (with V8's code cache of it, when it could make one), or why the schema does not compile. */
export type CompileAnswer = { readonly id: number; readonly error: string } | ({ readonly id: number; readonly cachedData?: Uint8Array } & SentCode);

/** What a compile in the worker gives: code, or the schema's compile error (a message for the caller). */
export type WorkerCode = { readonly error: string } | ({ readonly cachedData?: Uint8Array } & SentCode);

/**
 * Thrown when the worker takes no more compiles now (its queue is full, or it is closed); nothing
 * about the schema. `retryAfterMs`: when to try again (a full queue drains in a few seconds; a
 * closed compiler's replica is going, another takes the registration at once).
 */
export class CompilerBusyError extends Error {
  override readonly name = 'CompilerBusyError';
  constructor(
    message: string,
    readonly retryAfterMs: number,
  ) {
    super(message);
  }
}

/** {@link CompilerBusyError.retryAfterMs} when the queue is full, and when the compiler is closed. */
const QUEUE_FULL_RETRY_MS = 2_000;
const CLOSED_RETRY_MS = 200;

/** Options of {@link createCompileWorker}. */
export interface CompileWorkerOptions {
  /** How long one compile may take before the worker is ended (and started again for the next). */
  readonly timeoutMs: number;
  /** Compiles waiting (besides the one running) past which more are refused. */
  readonly maxQueued: number;
  /** How long an idle worker lives before it ends. @default WORKER_IDLE_MS */
  readonly idleMs?: number;
}

/** Compiles schemas in a worker thread, one at a time, so that the event loop goes on serving calls. */
export interface CompileWorker {
  compile(text: string, patternBound: SchemaPatternBound, checkMistakes?: boolean): Promise<WorkerCode>;
  /** Ends the worker; compiles waiting or running are refused ({@link CompilerBusyError}). */
  close(): Promise<void>;
}

/**
 * The worker's old generation at most, beside the main thread's heap, when no --max-old-space-size
 * is given (V8 applies that flag to every heap of the process, the Helm chart's included, and it
 * overrides this): a 256 KiB schema (2,000 properties, 5 MB of code) compiles within 128 MB (64 MB
 * is not enough); past this, that compile fails (see 'exit').
 */
const WORKER_HEAP_MB = 160;
/** An idle worker ends after this long, giving its heap back; the next compile starts another (80-300 ms, off the event loop). */
const WORKER_IDLE_MS = 30_000;
/** How long a new worker may take to load its modules (80-300 ms) before its first compile's timeout starts. */
const WORKER_START_MS = 10_000;

/** The worker's script: the compiled one beside this module, or (under jest, which runs the TypeScript) the build's. */
function workerScript(): string {
  const beside = join(__dirname, 'schema-worker.js');
  return existsSync(beside) ? beside : resolve(__dirname, '../../dist/src/registry/schema-worker.js');
}

interface Job {
  readonly text: string;
  readonly patternBound: SchemaPatternBound;
  readonly checkMistakes?: boolean;
  readonly resolve: (code: WorkerCode) => void;
  readonly reject: (error: Error) => void;
}

/**
 * Creates the compiler's worker for schemas of at most `maxSchemaBytes`. The thread starts with the
 * first compile and is unref'd while idle (it never keeps the process up); a compile past
 * `timeoutMs`, or a crash (out of memory), ends it and fails that compile alone.
 */
export function createCompileWorker(maxSchemaBytes: number, options: CompileWorkerOptions): CompileWorker {
  const queue: Job[] = [];
  let worker: Worker | undefined;
  let running: { readonly job: Job; readonly id: number; timer: NodeJS.Timeout } | undefined;
  // Whether the worker has loaded its modules (80-300 ms): a compile's timeout starts then.
  let ready = false;
  let serial = 0;
  let closed = false;
  let idle: NodeJS.Timeout | undefined;

  const start = (): Worker => {
    const thread = new Worker(workerScript(), { workerData: { maxSchemaBytes }, resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } });
    thread.on('message', (answer: CompileAnswer | typeof WORKER_READY) => {
      if (answer === WORKER_READY) {
        if (worker !== thread) return;
        ready = true;
        if (running) {
          clearTimeout(running.timer);
          running.timer = timeLimit(thread, running.id, running.job, options.timeoutMs);
        }
        return;
      }
      if (running?.id !== answer.id) return;
      const { job, timer } = running;
      clearTimeout(timer);
      running = undefined;
      const { id: _id, ...code } = answer;
      job.resolve(code);
      next();
    });
    // An uncaught error (out of memory) ends the thread: 'exit' follows.
    let failure: string | undefined;
    thread.on('error', (error: Error) => (failure = error.message));
    thread.on('exit', (exitCode) => {
      if (worker !== thread) return;
      worker = undefined;
      if (running) {
        const { job, timer } = running;
        clearTimeout(timer);
        running = undefined;
        job.resolve({ error: `input_schema does not compile: the schema compiler stopped while compiling it (${failure ?? `exit code ${exitCode}`}); simplify the schema, or try again` });
      }
      next();
    });
    return thread;
  };

  const next = () => {
    if (running || closed) return;
    const job = queue.shift();
    if (!job) {
      worker?.unref();
      clearTimeout(idle);
      idle = setTimeout(() => {
        const thread = worker;
        if (running || thread === undefined) return;
        worker = undefined;
        void thread.terminate();
      }, options.idleMs ?? WORKER_IDLE_MS).unref();
      return;
    }
    clearTimeout(idle);
    if (!worker) {
      ready = false;
      worker = start();
    }
    worker.ref();
    const id = ++serial;
    running = { job, id, timer: timeLimit(worker, id, job, ready ? options.timeoutMs : options.timeoutMs + WORKER_START_MS) };
    worker.postMessage({ id, text: job.text, patternBound: job.patternBound, checkMistakes: job.checkMistakes } satisfies CompileRequest);
  };

  /** Ends `thread` when compile `id` takes past `ms`, failing that compile alone. */
  const timeLimit = (thread: Worker, id: number, job: Job, ms: number) =>
    setTimeout(() => {
      if (running?.id !== id) return;
      running = undefined;
      worker = undefined;
      job.resolve({ error: `input_schema does not compile: compiling it took longer than ${options.timeoutMs} ms; simplify the schema (fewer or smaller subschemas)` });
      void thread.terminate().finally(next);
    }, ms);

  return {
    compile(text, patternBound, checkMistakes) {
      if (closed) return Promise.reject(new CompilerBusyError('the schema compiler is closed: the server is shutting down; register the tools with another replica', CLOSED_RETRY_MS));
      if (queue.length >= options.maxQueued) {
        return Promise.reject(new CompilerBusyError(`the schema compiler has ${queue.length} schemas waiting, its limit; try again in a few seconds`, QUEUE_FULL_RETRY_MS));
      }
      return new Promise<WorkerCode>((resolve, reject) => {
        queue.push({ text, patternBound, checkMistakes, resolve, reject });
        next();
      });
    },
    async close() {
      closed = true;
      clearTimeout(idle);
      const busy = new CompilerBusyError('the schema compiler was closed while the schema waited: the server is shutting down; register the tools with another replica', CLOSED_RETRY_MS);
      for (const job of queue.splice(0)) job.reject(busy);
      if (running) {
        clearTimeout(running.timer);
        running.job.reject(busy);
        running = undefined;
      }
      const thread = worker;
      worker = undefined;
      await thread?.terminate();
    },
  };
}
