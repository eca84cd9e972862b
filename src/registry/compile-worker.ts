import { createJobThread, THREAD_READY } from '../server/job-thread';
import { threadHeapDefault } from '../server/thread-heap';
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
export const WORKER_READY = THREAD_READY;

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
 * The worker's old generation at most, beside the main thread's heap (under the Helm chart's
 * --max-old-space-size too, which V8 would apply to every heap: see startWithOwnHeap; a smaller
 * flag instead, threadHeapDefault): a 256 KiB schema (2,000 properties, 5 MB of code) compiles
 * within 128 MB (64 MB is not enough); past this, that compile fails (see 'exit').
 */
const WORKER_HEAP_MB = 160;
/** An idle worker ends after this long, giving its heap back; the next compile starts another (80-300 ms, off the event loop). */
const WORKER_IDLE_MS = 30_000;

interface Job {
  readonly text: string;
  readonly patternBound: SchemaPatternBound;
  readonly checkMistakes?: boolean;
  readonly resolve: (code: WorkerCode) => void;
  readonly reject: (error: Error) => void;
}

/**
 * Creates the compiler's worker for schemas of at most `maxSchemaBytes` (a job thread: see
 * createJobThread). A compile past `timeoutMs`, or a crash (out of memory), fails that compile alone.
 */
export function createCompileWorker(maxSchemaBytes: number, options: CompileWorkerOptions): CompileWorker {
  const queue: Job[] = [];
  let closed = false;
  const thread = createJobThread<Job, CompileAnswer>({
    script: 'registry/schema-worker.js',
    workerData: { maxSchemaBytes },
    heapMb: threadHeapDefault(WORKER_HEAP_MB),
    timeoutMs: options.timeoutMs,
    idleMs: options.idleMs ?? WORKER_IDLE_MS,
    take: () => queue.shift(),
    request: (job, id) => ({ id, text: job.text, patternBound: job.patternBound, checkMistakes: job.checkMistakes }) satisfies CompileRequest,
    answered: (job, { id: _id, ...code }) => job.resolve(code),
    failed: (job, failure) =>
      job.resolve({
        error:
          failure.reason === 'crashed'
            ? `input_schema does not compile: the schema compiler stopped while compiling it (${failure.detail}); simplify the schema, or try again`
            : `input_schema does not compile: compiling it took longer than ${options.timeoutMs} ms; simplify the schema (fewer or smaller subschemas)`,
      }),
  });

  return {
    compile(text, patternBound, checkMistakes) {
      if (closed) return Promise.reject(new CompilerBusyError('the schema compiler is closed: the server is shutting down; register the tools with another replica', CLOSED_RETRY_MS));
      if (queue.length >= options.maxQueued) {
        return Promise.reject(new CompilerBusyError(`the schema compiler has ${queue.length} schemas waiting, its limit; try again in a few seconds`, QUEUE_FULL_RETRY_MS));
      }
      return new Promise<WorkerCode>((resolve, reject) => {
        queue.push({ text, patternBound, checkMistakes, resolve, reject });
        thread.next();
      });
    },
    async close() {
      closed = true;
      const busy = new CompilerBusyError('the schema compiler was closed while the schema waited: the server is shutting down; register the tools with another replica', CLOSED_RETRY_MS);
      for (const job of queue.splice(0)) job.reject(busy);
      (await thread.close())?.reject(busy);
    },
  };
}
