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
