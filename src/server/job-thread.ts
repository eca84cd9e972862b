import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { startWithOwnHeap } from './thread-heap';

/** What a job thread posts once it has loaded its modules: a job's time bound counts from then. */
export const THREAD_READY = 'ready';

/** An answer a job thread posts: the id of the job it answers, and the rest its owner reads. */
export interface ThreadAnswer {
  readonly id: number;
}

/** How a job the thread took ended without an answer. */
export type ThreadFailure = { readonly reason: 'crashed'; readonly detail: string } | { readonly reason: 'timed_out' };

/** Options of {@link createJobThread}. */
export interface JobThreadOptions<Job, Answer extends ThreadAnswer> {
  /** The thread's script, a module's path in dist/ relative to `src/` (`registry/schema-worker.js`). */
  readonly script: string;
  readonly workerData: unknown;
  /** The thread's old space at most, in MB (also under a --max-old-space-size of the process: see startWithOwnHeap). */
  readonly heapMb: number;
  /** How long one job may take before the thread is ended and that job fails. */
  readonly timeoutMs: number;
  /** How long an idle thread lives before it ends, giving its heap back. */
  readonly idleMs: number;
  /** The next job to run, or undefined when none waits: the owner keeps its own queue. */
  readonly take: () => Job | undefined;
  /** The message that asks the thread for `job`, as job `id`. */
  readonly request: (job: Job, id: number) => unknown;
  /** Called with the thread's answer to `job`. */
  readonly answered: (job: Job, answer: Answer) => void;
  /** Called when `job` got no answer: the thread stopped (out of memory, a throw) or took past `timeoutMs`. */
  readonly failed: (job: Job, failure: ThreadFailure) => void;
}

/** One worker thread running its owner's jobs one at a time (see {@link createJobThread}). */
export interface JobThread<Job> {
  /** Starts the next job the owner has, if none runs (and the thread, if none lives). */
  next(): void;
  /**
   * Ends the thread when it is running `job` (nobody wants its answer any more): the job gets no
   * answer, nor a failure (its owner settles it), and the next job starts another thread. False
   * when `job` is not the one running.
   */
  stop(job: Job): boolean;
  /** Ends the thread; resolves with the job it was running, if any, which its owner fails. Takes no more jobs. */
  close(): Promise<Job | undefined>;
}

/** How long a new thread may take to load its modules (80-300 ms) before its first job's time bound starts. */
const START_MS = 10_000;

/** The compiled `script` in dist/, beside this module's own build, or (under jest, which runs the TypeScript) the build's. */
function scriptPath(script: string): string {
  const beside = join(__dirname, '..', script);
  return existsSync(beside) ? beside : resolve(__dirname, '../../dist/src', script);
}

/**
 * A worker thread for jobs that would block the event loop (a schema's compile, a large output's
 * redaction), run one at a time. The thread starts with the first job, is unref'd while idle (it
 * never keeps the process up) and ends after `idleMs` idle; a job past `timeoutMs`, or a crash
 * (out of memory), ends it and fails that job alone: the next job starts another.
 */
export function createJobThread<Job, Answer extends ThreadAnswer>(options: JobThreadOptions<Job, Answer>): JobThread<Job> {
  let worker: Worker | undefined;
  let running: { readonly job: Job; readonly id: number; timer: NodeJS.Timeout } | undefined;
  // Whether the thread has loaded its modules: a job's time bound starts then.
  let ready = false;
  let serial = 0;
  let closed = false;
  let idle: NodeJS.Timeout | undefined;

  const start = (): Worker => {
    const thread = startWithOwnHeap(() => new Worker(scriptPath(options.script), { workerData: options.workerData, resourceLimits: { maxOldGenerationSizeMb: options.heapMb } }));
    thread.on('message', (answer: Answer | typeof THREAD_READY) => {
      if (answer === THREAD_READY) {
        if (worker !== thread) return;
        ready = true;
        if (running) {
          clearTimeout(running.timer);
          running.timer = timeLimit(thread, running.id, options.timeoutMs);
        }
        return;
      }
      if (running?.id !== answer.id) return;
      const { job, timer } = running;
      clearTimeout(timer);
      running = undefined;
      options.answered(job, answer);
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
        options.failed(job, { reason: 'crashed', detail: failure ?? `exit code ${exitCode}` });
      }
      next();
    });
    return thread;
  };

  const next = () => {
    if (running || closed) return;
    const job = options.take();
    if (job === undefined) {
      worker?.unref();
      clearTimeout(idle);
      idle = setTimeout(() => {
        const thread = worker;
        if (running || thread === undefined) return;
        worker = undefined;
        void thread.terminate();
      }, options.idleMs).unref();
      return;
    }
    clearTimeout(idle);
    if (!worker) {
      ready = false;
      worker = start();
    }
    worker.ref();
    const id = ++serial;
    running = { job, id, timer: timeLimit(worker, id, ready ? options.timeoutMs : options.timeoutMs + START_MS) };
    worker.postMessage(options.request(job, id));
  };

  /** Forgets the running job (its timer cleared) and the thread, which the caller ends: its 'exit' is then no crash. */
  const dropThread = (): Worker | undefined => {
    if (running) clearTimeout(running.timer);
    running = undefined;
    const thread = worker;
    worker = undefined;
    return thread;
  };

  /** Ends `thread` when job `id` takes past `ms`, failing that job alone. */
  const timeLimit = (thread: Worker, id: number, ms: number) =>
    setTimeout(() => {
      if (running?.id !== id) return;
      const { job } = running;
      dropThread();
      options.failed(job, { reason: 'timed_out' });
      void thread.terminate().finally(next);
    }, ms);

  return {
    next,
    stop(job) {
      if (running?.job !== job) return false;
      void dropThread()?.terminate().finally(next);
      return true;
    },
    async close() {
      closed = true;
      clearTimeout(idle);
      const job = running?.job;
      await dropThread()?.terminate();
      return job;
    },
  };
}
