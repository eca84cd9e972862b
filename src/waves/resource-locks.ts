import { HardError } from '../errors';
import { onAbort, type Release, type ResourceHolds, type TurnSignal } from '../pipeline';
import { resourceKeyIn } from './resource-key';

/** Held names, each with the grants of the attempts waiting for it, first in line first. */
type Held = Map<string, Array<() => void>>;

/**
 * The resources of one parallel turn, by resource key. The planner keeps calls on one key in
 * separate waves, reading the key from the arguments before any hook runs; a policy that rewrites
 * arguments can still bring two calls of one wave onto one resource. Each attempt holds its key,
 * read from the arguments it runs with, until it ends: a second attempt on that key waits for the
 * first (waiters are served in the order they asked). With no rewrite every hold is free at once:
 * calls on one key are in different waves, and a wave ends only when its calls have.
 *
 * A side-effecting attempt also holds its idempotency key (apart from resource keys), after its
 * resource, always in that order: a `modify` policy that makes two calls of one wave one call
 * (docs/policies.md) then has the later wait and be replayed, as in sequential mode; side by side
 * it found the earlier's claim and failed IN_PROGRESS.
 */
export class ResourceLocks implements ResourceHolds {
  private readonly resources: Held = new Map();
  private readonly claims: Held = new Map();

  hold(pointer: string, args: unknown, signal: TurnSignal, claimKey?: string): Release | undefined | Promise<Release> {
    const resource = this.take(this.resources, resourceKeyIn(args, pointer), signal);
    if (claimKey === undefined) return resource;
    const thenClaim = (first: Release | undefined) => {
      const claim = this.take(this.claims, claimKey, signal)!;
      if (first === undefined) return claim;
      const both = (second: Release): Release => () => {
        second();
        first();
      };
      return claim instanceof Promise ? claim.then(both, (error: unknown) => (first(), Promise.reject(error))) : both(claim);
    };
    return resource instanceof Promise ? resource.then(thenClaim) : thenClaim(resource);
  }

  /** Holds `key` in `held`: undefined for no key, the release when free, else a promise of it. */
  private take(held: Held, key: string | undefined, signal: TurnSignal): Release | undefined | Promise<Release> {
    if (key === undefined) return undefined;
    const waiting = held.get(key);
    if (!waiting) {
      held.set(key, []);
      return this.releaser(held, key);
    }
    if (signal.aborted) return Promise.reject(HardError.cancelled());
    return new Promise<Release>((resolve, reject) => {
      const grant = () => {
        stopWatching();
        resolve(this.releaser(held, key));
      };
      const stopWatching = onAbort(signal, () => {
        waiting.splice(waiting.indexOf(grant), 1);
        reject(HardError.cancelled());
      });
      waiting.push(grant);
    });
  }

  /** Gives `key` to the next waiter, or frees it; a second call does nothing. */
  private releaser(held: Held, key: string): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const waiting = held.get(key)!;
      const next = waiting.shift();
      if (next) next();
      else held.delete(key);
    };
  }
}
