import { HardError } from '../errors';
import { onAbort, type Release, type ResourceHolds, type TurnSignal } from '../pipeline';
import { resourceKeyIn } from './resource-key';

/**
 * The resources of one parallel turn, by resource key. The planner keeps calls on one key in
 * separate waves, reading the key from the arguments before any hook runs; a policy that rewrites
 * arguments can still bring two calls of one wave onto one resource. Each attempt holds its key,
 * read from the arguments it runs with, until it ends: a second attempt on that key waits for the
 * first (waiters are served in the order they asked). With no rewrite every hold is free at once:
 * calls on one key are in different waves, and a wave ends only when its calls have.
 */
export class ResourceLocks implements ResourceHolds {
  /** Held keys, each with the grants of the attempts waiting for it, first in line first. */
  private readonly held = new Map<string, Array<() => void>>();

  hold(pointer: string, args: unknown, signal: TurnSignal): Release | undefined | Promise<Release> {
    const key = resourceKeyIn(args, pointer);
    if (key === undefined) return undefined;
    const waiting = this.held.get(key);
    if (!waiting) {
      this.held.set(key, []);
      return this.releaser(key);
    }
    if (signal.aborted) return Promise.reject(HardError.cancelled());
    return new Promise<Release>((resolve, reject) => {
      const grant = () => {
        stopWatching();
        resolve(this.releaser(key));
      };
      const stopWatching = onAbort(signal, () => {
        waiting.splice(waiting.indexOf(grant), 1);
        reject(HardError.cancelled());
      });
      waiting.push(grant);
    });
  }

  /** Gives `key` to the next waiter, or frees it; a second call does nothing. */
  private releaser(key: string): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const waiting = this.held.get(key)!;
      const next = waiting.shift();
      if (next) next();
      else this.held.delete(key);
    };
  }
}
