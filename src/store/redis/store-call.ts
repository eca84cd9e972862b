import { ReplyError } from 'ioredis';
import { StoreUnavailableError } from '../store';

/**
 * Runs one store step against Redis with a deadline: resolves with its reply, or rejects with a
 * StoreUnavailableError when Redis fails, refuses (disconnected) or has not answered in `timeoutMs`.
 */
export function storeCall<T>(what: string, timeoutMs: number, run: () => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new StoreUnavailableError(`redis did not answer ${what} within ${timeoutMs} ms`)), timeoutMs);
    let pending: Promise<T>;
    try {
      pending = run();
    } catch (error) {
      pending = Promise.reject(error);
    }
    pending.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        const message = error instanceof Error ? error.message : String(error);
        reject(new StoreUnavailableError(`redis failed ${what}: ${message}`, { cause: error }));
      },
    );
  });
}

/**
 * Whether a step that failed got Redis's answer, an error reply (out of memory, NOPERM, READONLY, a
 * script's error): Redis ran none of the command, or a script up to the command that failed. A
 * step with no answer (timed out, connection lost) may still have run, or run later.
 */
export const answeredWithError = (error: unknown): boolean => error instanceof StoreUnavailableError && error.cause instanceof ReplyError;
