import type { Completion } from '../../../gen/dispatch/v1/worker_pb';
import type { DispatchError } from '../../errors';
import { workerToolError } from './worker-errors';
import type { WorkerLink } from './worker-link';

/**
 * How long a worker's answer to a side-effecting assignment abandoned at its timeout is still
 * heard, and how many such assignments are listened for at most (the oldest is given up first).
 * Workers need not stop at a cancel: one that ran the call to its end says what it did.
 */
export const LATE_ANSWER_MS = 60_000;
const MAX_LATE_ANSWERS = 1_024;

/** An abandoned assignment's call, still open to its worker's answer. */
export interface LateWait {
  readonly link: WorkerLink;
  readonly tool: string;
  /** Why it was abandoned: what the call is rejected with when no answer comes. */
  readonly reason: unknown;
  resolve(output: string): void;
  reject(error: unknown): void;
}

/** Settles `call` with `completion`: its output, or (is_error) its tool's error, as the worker said it. */
export function settleWith(call: { readonly tool: string; resolve(output: string): void; reject(error: DispatchError): void }, completion: Completion): void {
  if (completion.isError) call.reject(workerToolError(call.tool, completion.errorMessage || completion.output, completion.retryAfterMs));
  else call.resolve(completion.output);
}

/** Side-effecting assignments abandoned after they were sent, whose calls wait for their workers' answers. */
export interface LateAnswers {
  /** Listens for the answer to assignment `id` for LATE_ANSWER_MS. */
  hold(id: string, wait: LateWait): void;
  /** Settles the call `completion` answers, when one waits for it from `link`'s worker; false when none does. */
  answer(link: WorkerLink, completion: Completion): boolean;
  /** Gives up the calls waiting on `link` (its worker is gone), or on every link. */
  drop(link?: WorkerLink): void;
}

export function createLateAnswers(): LateAnswers {
  // In the order they were held, which is the order they expire in.
  const waits = new Map<string, LateWait & { readonly until: number }>();
  let timer: NodeJS.Timeout | undefined;

  const giveUp = (id: string) => {
    const wait = waits.get(id)!;
    waits.delete(id);
    wait.reject(wait.reason);
  };
  const sweep = () => {
    timer = undefined;
    const now = Date.now();
    for (const [id, wait] of waits) {
      if (wait.until > now) {
        timer = setTimeout(sweep, wait.until - now).unref();
        return;
      }
      giveUp(id);
    }
  };

  return {
    hold(id, wait) {
      waits.set(id, { ...wait, until: Date.now() + LATE_ANSWER_MS });
      if (waits.size > MAX_LATE_ANSWERS) giveUp(waits.keys().next().value!);
      timer ??= setTimeout(sweep, LATE_ANSWER_MS).unref();
    },
    answer(link, completion) {
      const wait = waits.get(completion.assignmentId);
      if (wait?.link !== link) return false;
      waits.delete(completion.assignmentId);
      settleWith(wait, completion);
      return true;
    },
    drop(link) {
      for (const [id, wait] of waits) if (link === undefined || wait.link === link) giveUp(id);
      if (waits.size === 0 && timer) {
        clearTimeout(timer);
        timer = undefined;
      }
    },
  };
}
