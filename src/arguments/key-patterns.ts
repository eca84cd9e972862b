import type { RE2 } from 're2-wasm';
import { leasePatterns, type PatternLease } from '../registry/pattern-pool';

/** The owner a repair's lease is taken for: it is never committed, so it holds and counts no pattern. */
const LOOKUP = 'dispatch:lenient-repair';

/** Member names tested against a schema's `patternProperties`; see {@link keyPatterns}. */
export interface KeyPatterns {
  /** Whether `name` matches `pattern`; undefined when no RE2 of the pattern could be had (the pool is full). */
  matches(pattern: string, name: string): boolean | undefined;
  /** Frees the RE2s made for these tests alone. */
  close(): void;
}

/**
 * Tests member names against patterns as validation does: on the pattern pool's RE2 of the
 * pattern with the `u` flag (as Ajv asks for it), the one the tool's validate function runs, so a
 * name is matched as validation matches it, in linear time (a pattern may backtrack exponentially
 * on a RegExp). The RE2 is taken through a lease that is never committed: a pattern the pool does
 * not hold (a schema no registered tool has) gets an RE2 of its own, which `close` frees.
 */
export function keyPatterns(): KeyPatterns {
  let lease: PatternLease | undefined;
  return {
    matches(pattern, name) {
      lease ??= leasePatterns(LOOKUP, { perTenantBound: false });
      let re: RE2;
      try {
        re = lease.take(pattern, 'u');
      } catch {
        return undefined;
      }
      return re.test(name);
    },
    close() {
      lease?.abort();
    },
  };
}
