import { createJobThread, THREAD_READY } from '../server/job-thread';
import { threadHeapDefault } from '../server/thread-heap';
import type { RedactionOptions } from './redact-secrets';
import { createTenantRotation } from './tenant-rotation';

/** A job's texts sent to the thread. */
export interface RedactionRequest {
  readonly id: number;
  readonly texts: readonly string[];
}

/** The thread's answer: the texts redacted, in order, or why it could not redact them. */
export type RedactionAnswer = { readonly id: number; readonly texts: readonly string[] } | { readonly id: number; readonly error: string };

/** What the thread posts once it has loaded its modules: a job's time bound counts from then. */
export const REDACTION_READY = THREAD_READY;

/** Why a job was not redacted: nothing of its texts is given back. */
export type RedactionFailure = 'dropped' | 'crashed' | 'timed_out' | 'closed';

/** A job that gave no redacted texts; `reason` says why. */
export class RedactionWorkerError extends Error {
  override readonly name = 'RedactionWorkerError';
  constructor(
    message: string,
    readonly reason: RedactionFailure,
  ) {
    super(message);
  }
}

/** The call a job redacts for: whose turn it waits for, and when nobody waits for it any more. */
export interface RedactionCall {
  readonly tenant: string;
  /** Epoch milliseconds past which a job not started yet is dropped. */
  readonly deadline: number;
  /** Runs `listener` once the call is aborted (at once if it is); returns the unsubscribe. */
  onAbort(listener: (reason: unknown) => void): () => void;
  /**
   * Told, as a side-effecting call is cut off (`keepLate`) while its output waits here or is being
   * redacted, that the job goes on and its end settles the call's output: its tool's answer, in hand,
   * is recorded in place of OUTCOME_UNKNOWN (ExecutorContext.lateAnswerPending, late-answer.ts).
   */
  lateAnswerPending?(answered: true): void;
}

/** Options of {@link createRedactionWorker}. */
export interface RedactionWorkerOptions {
  /** How long one job may run before the thread is ended and that job fails. @default REDACTION_TIMEOUT_MS */
  readonly timeoutMs?: number;
  /** How long an idle thread lives before it ends, giving its heap back. @default 30 s */
  readonly idleMs?: number;
  /** The thread's old generation at most, in MB (outside the main thread's heap). @default REDACTION_HEAP_MB, or a smaller --max-old-space-size (threadHeapDefault) */
  readonly heapMb?: number;
  /** Characters of the jobs kept past their calls' ends at most. @default LATE_JOBS_MAX_CHARS */
  readonly lateMaxChars?: number;
}

/**
 * How long one job may run: the slowest hostile text redacts at ~1.2 s a Mi characters alone on a
 * core (`pwd="a" ` repeated), so 16 Mi characters (limits.max_tool_output_chars) in ~20 s; three
 * times that for a busy host.
 */
export const REDACTION_TIMEOUT_MS = 60_000;

/**
 * The thread's old space at most, beside the main heap (under a --max-old-space-size too, which
 * V8 would apply to every heap: see startWithOwnHeap; a smaller flag is the default then, see
 * threadHeapDefault): 16 Mi
 * characters (limits.max_tool_output_chars) of JSON or high-entropy text redact within 256 MB, of
 * `password: x` lines ~320 MB, of `pwd="a" ` 512 MB; past it (`pwd=a&`: ~768 MB), that job fails.
 */
export const REDACTION_HEAP_MB = 512;
/** An idle thread ends after this long; the next job starts another (~150 ms, off the event loop). */
const IDLE_MS = 30_000;

/**
 * Characters (texts together) of the jobs kept past their calls' ends at most: side-effecting
 * calls' outputs, whose tools answered, to be recorded once redacted (late-answer.ts). Two of the
 * longest outputs (limits.max_tool_output_chars, 16 Mi); past it, a job is dropped as before, and
 * its call's record keeps the withheld answer (the tool ran) rather than OUTCOME_UNKNOWN.
 */
export const LATE_JOBS_MAX_CHARS = 32 * 1024 * 1024;

/**
 * A job of at least this many characters (texts together) that nobody wants any more (a read-only
 * call's, cut off) ends the thread redacting it, rather than running to its end: it could take up
 * to ~1.2 s a Mi characters at the slowest (20 s for 16 Mi), holding every other tenant's output
 * back, where a new thread costs ~150 ms of the thread's start, off the event loop. A smaller
 * job, at most ~1.2 s, is left to end.
 */
export const STOP_RUNNING_CHARS = 1024 * 1024;

/** Redacts texts in a worker thread, one job at a time, tenants in turn. */
export interface RedactionWorker {
  /**
   * `texts` redacted as redactSecrets does with the worker's options, in order. Rejects with a
   * {@link RedactionWorkerError}: `dropped` when the call was aborted, or its deadline passed,
   * before its turn, or was aborted while a job of {@link STOP_RUNNING_CHARS} or more ran (its
   * thread ended), unless `keepLate` (a side-effecting call's output: its tool ran, so its
   * answer is recorded once redacted, late-answer.ts), whose job is kept, waiting or running, past
   * its call's end or deadline, up to {@link LATE_JOBS_MAX_CHARS} of such jobs (a call already
   * aborted when it asks is a late answer too: kept, or else dropped at once); `crashed` or `timed_out` when the thread
   * ran out of memory, threw, or took past the bound (the thread is ended, the next job starts
   * another); `closed` once closed.
   */
  redact(texts: readonly string[], call: RedactionCall, keepLate: boolean): Promise<readonly string[]>;
  /** Ends the thread; jobs waiting or running are refused (`closed`). */
  close(): Promise<void>;
}

/** Characters of a job's texts together. */
function charsOf(job: Job): number {
  let chars = 0;
  for (const text of job.texts) chars += text.length;
  return chars;
}

interface Job {
  readonly texts: readonly string[];
  readonly tenant: string;
  /** Undefined for a late answer, which is never dropped. */
  deadline: number | undefined;
  /** A side-effecting call's output: kept past its call's end or deadline, within LATE_JOBS_MAX_CHARS. */
  readonly keepLate: boolean;
  /** Characters counted against LATE_JOBS_MAX_CHARS while the job is kept past its call's end. */
  lateChars: number;
  readonly resolve: (texts: readonly string[]) => void;
  readonly reject: (error: RedactionWorkerError) => void;
  unsubscribe: () => void;
}

/**
 * Creates the redaction worker for `redaction`'s options. The thread starts with the first job and
 * is unref'd while idle (it never keeps the process up). Jobs wait per tenant, taken in turn: the
 * queue has no bound of its own, as each job is an attempt in flight already holding its output
 * (bounded by limits.max_calls_in_flight and max_answer_bytes_in_flight), or a side-effecting
 * call's output kept past its call's end (bounded by LATE_JOBS_MAX_CHARS).
 */
export function createRedactionWorker(redaction: RedactionOptions = {}, options: RedactionWorkerOptions = {}): RedactionWorker {
  const timeoutMs = options.timeoutMs ?? REDACTION_TIMEOUT_MS;
  const lateMaxChars = options.lateMaxChars ?? LATE_JOBS_MAX_CHARS;
  const waiting = createTenantRotation<Job>();
  let closed = false;
  let lateChars = 0;

  const settle = (job: Job, outcome: readonly string[] | RedactionWorkerError) => {
    job.unsubscribe();
    lateChars -= job.lateChars;
    job.lateChars = 0;
    if (outcome instanceof RedactionWorkerError) job.reject(outcome);
    else job.resolve(outcome);
  };

  /** The next job in turn that is still wanted: one whose deadline passed before its turn is dropped, unless kept (keepLate). */
  const nextWanted = (): Job | undefined => {
    for (let job = waiting.take(); job !== undefined; job = waiting.take()) {
      if (job.deadline === undefined || Date.now() < job.deadline || (job.keepLate && keep(job))) return job;
      settle(job, new RedactionWorkerError("the call's deadline passed before its turn", 'dropped'));
    }
    return undefined;
  };

  const thread = createJobThread<Job, RedactionAnswer>({
    script: 'middleware/redaction-thread.js',
    workerData: { options: redaction },
    heapMb: options.heapMb ?? threadHeapDefault(REDACTION_HEAP_MB),
    timeoutMs,
    idleMs: options.idleMs ?? IDLE_MS,
    take: nextWanted,
    request: (job, id) => ({ id, texts: job.texts }) satisfies RedactionRequest,
    answered: (job, answer) => settle(job, 'texts' in answer ? answer.texts : new RedactionWorkerError(`redaction failed: ${answer.error}`, 'crashed')),
    failed: (job, failure) =>
      settle(
        job,
        failure.reason === 'crashed'
          ? new RedactionWorkerError(`the redaction worker stopped while redacting it (${failure.detail})`, 'crashed')
          : new RedactionWorkerError(`redacting it took longer than ${timeoutMs} ms`, 'timed_out'),
      ),
  });

  const lateDropped = (why: string) => new RedactionWorkerError(`${why}, with ${lateMaxChars} characters of ended calls' outputs waiting at most`, 'dropped');
  /** Keeps `job` past its call's end, when lateMaxChars has room for it; false when not. */
  const keep = (job: Job): boolean => {
    const chars = charsOf(job);
    if (lateChars + chars > lateMaxChars) return false;
    lateChars += job.lateChars = chars;
    job.deadline = undefined;
    return true;
  };

  return {
    redact(texts, call, keepLate) {
      if (closed) return Promise.reject(new RedactionWorkerError('the redaction worker is closed: dispatchd is shutting down', 'closed'));
      return new Promise<readonly string[]>((resolve, reject) => {
        let late = false;
        let job: Job | undefined;
        const unsubscribe = call.onAbort(() => {
          // Called at once when the call has ended already: a late answer.
          if (job === undefined) late = true;
          else if (job.keepLate) {
            // The job's end, waiting or running, settles the output, which is recorded: kept, or dropped now if past the bound.
            call.lateAnswerPending?.(true);
            if (job.lateChars === 0 && !keep(job) && waiting.remove(job.tenant, job)) settle(job, lateDropped('the call ended before its turn'));
          } else if (waiting.remove(job.tenant, job)) settle(job, new RedactionWorkerError('the call ended before its turn', 'dropped'));
          else if (charsOf(job) >= STOP_RUNNING_CHARS && thread.stop(job)) settle(job, new RedactionWorkerError('the call ended while it was redacted', 'dropped'));
        });
        job = { texts, tenant: call.tenant, deadline: late ? undefined : call.deadline, keepLate, lateChars: 0, resolve, reject, unsubscribe };
        if (late && !keepLate) return settle(job, new RedactionWorkerError('the call had ended when its output came', 'dropped'));
        if (late && !keep(job)) return settle(job, lateDropped('the call had ended when its output came'));
        waiting.push(job.tenant, job);
        thread.next();
      });
    },
    async close() {
      closed = true;
      const refused = () => new RedactionWorkerError('the redaction worker was closed: dispatchd is shutting down', 'closed');
      for (let job = waiting.take(); job !== undefined; job = waiting.take()) settle(job, refused());
      const running = await thread.close();
      if (running !== undefined) settle(running, refused());
    },
  };
}
