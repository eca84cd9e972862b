import type { RE2 } from 're2-wasm';
import { re2 } from './re2-lazy';

/**
 * Distinct patterns this process holds at most. re2-wasm's memory is fixed (16 MiB, ~10,000 small
 * patterns) and runs out for good if filled: one RE2 per distinct pattern and flags, shared by every
 * schema using it (with `test` only: stateless).
 */
export const MAX_DISTINCT_PATTERNS = 5_000;
/** Of {@link MAX_DISTINCT_PATTERNS}, kept for the operator's tools (tenant "": the config file's, MCP servers'). */
export const OPERATOR_RESERVED_PATTERNS = 1_000;
/** Distinct patterns the registered tools of one tenant hold at most. */
export const MAX_PATTERNS_PER_TENANT = 500;

/** A pattern's RE2: held strongly while a registered tool counts it, weakly after. */
interface Entry {
  strong: RE2 | undefined;
  readonly weak: WeakRef<RE2>;
  refs: number;
}

interface Native {
  readonly wrapper: { delete(): void };
}

/** `flags/pattern` to its entry; an entry goes when its RE2 is collected. */
const entries = new Map<string, Entry>();
/** Per owner (tenant, "" for the operator), the patterns its registered tools hold, with how many tools hold each. */
const owned = new Map<string, Map<string, number>>();

// An RE2's native memory is freed only by delete(): once nothing can call it (no validate function
// of a tool still registered or of a call still running holds it), it is deleted.
const finalizer = new FinalizationRegistry<{ key: string; native: Native['wrapper'] }>(({ key, native }) => {
  native.delete();
  if (entries.get(key)?.weak.deref() === undefined) entries.delete(key);
});

/** Patterns held in this process (those no longer counted go when collected). */
export function patternsHeld(): number {
  return entries.size;
}

/** Patterns held by `owner`'s registered tools. */
export function patternsOwned(owner: string): number {
  return owned.get(owner)?.size ?? 0;
}

/** The patterns one compile takes: counted for its owner only once committed (the compile succeeded). */
export interface PatternLease {
  /** The RE2 of a pattern, refusing one past the owner's or the process's bound. */
  take(pattern: string, flags: string): RE2;
  /** Counts the patterns taken for the owner; returns what gives them back (once: the tool is removed or replaced). */
  commit(): () => void;
  /** Forgets the patterns taken (the compile failed): those made for it alone are freed now. */
  abort(): void;
}

function refusal(owner: string, count: number): string {
  return `tenant "${owner}" would hold ${count + 1} distinct patterns, over the limit of ${MAX_PATTERNS_PER_TENANT} per tenant; use fewer distinct "pattern" keywords, or remove tools it no longer uses`;
}

/** The refusal of a pattern past the process's bound, for `owner`'s tools. */
function processRefusal(owner: string): string {
  return owner === ''
    ? `this process already holds ${MAX_DISTINCT_PATTERNS} distinct patterns; use fewer distinct "pattern" keywords`
    : `this process already holds ${MAX_DISTINCT_PATTERNS - OPERATOR_RESERVED_PATTERNS} distinct patterns of tenants' tools (the last ${OPERATOR_RESERVED_PATTERNS} of ${MAX_DISTINCT_PATTERNS} are kept for the operator's); use fewer distinct "pattern" keywords`;
}

/** The most distinct patterns one schema may have for `owner`: past it, a lease always refuses it, with `refusal`. */
export interface SchemaPatternBound {
  readonly max: number;
  readonly refusal: string;
}

/**
 * The bound of {@link SchemaPatternBound} for a compile of `owner` with `options`: where a schema
 * is compiled before its patterns are leased (a worker thread), one with more distinct patterns
 * than any lease could take is refused there, with the lease's words, as soon as its compile meets
 * the first pattern past the bound (as a compile leasing its patterns as it goes did), not after
 * compiling all of a 5,000-pattern schema (seconds) for the lease to refuse it.
 */
export function schemaPatternBound(owner: string, options: LeaseOptions = {}): SchemaPatternBound {
  if (owner !== '' && options.perTenantBound !== false) return { max: MAX_PATTERNS_PER_TENANT, refusal: refusal(owner, MAX_PATTERNS_PER_TENANT) };
  return { max: owner === '' ? MAX_DISTINCT_PATTERNS : MAX_DISTINCT_PATTERNS - OPERATOR_RESERVED_PATTERNS, refusal: processRefusal(owner) };
}

/** What each committed compile's release gives back: its owner and pattern keys, until released. */
const holds = new WeakMap<() => void, { readonly owner: string; readonly keys: readonly string[] }>();

/** Options of {@link leasePatterns}. */
export interface LeaseOptions {
  /**
   * Releases (from {@link PatternLease.commit}) of the owner's tools this compile replaces: a
   * pattern only they hold does not count for the owner, as they go once it is installed. @default none
   */
  readonly replacing?: readonly (() => void)[];
  /**
   * Whether {@link MAX_PATTERNS_PER_TENANT} applies; false for a tool another replica registered
   * (that replica decided). The process's bound always applies. @default true
   */
  readonly perTenantBound?: boolean;
}

/** Starts the pattern taking of one compile for `owner`. */
export function leasePatterns(owner: string, options: LeaseOptions = {}): PatternLease {
  const taken = new Map<string, RE2>();
  const made: RE2[] = [];
  const mine = owned.get(owner);
  // How many of the owner's holders of each pattern go with the replaced tools.
  const going = new Map<string, number>();
  for (const release of options.replacing ?? []) {
    const hold = holds.get(release);
    if (hold?.owner === owner) for (const key of hold.keys) going.set(key, (going.get(key) ?? 0) + 1);
  }
  const kept = (key: string) => (mine?.get(key) ?? 0) > (going.get(key) ?? 0);
  const keptCount = [...(mine?.keys() ?? [])].filter(kept).length;
  const bounded = owner !== '' && options.perTenantBound !== false;
  let newForOwner = 0;
  return {
    take(pattern, flags) {
      const key = `${flags}/${pattern}`;
      const known = taken.get(key);
      if (known) return known;
      if (bounded && !kept(key) && keptCount + newForOwner >= MAX_PATTERNS_PER_TENANT) throw new Error(refusal(owner, keptCount + newForOwner));
      let re = entries.get(key)?.weak.deref();
      if (!re) {
        const bound = owner === '' ? MAX_DISTINCT_PATTERNS : MAX_DISTINCT_PATTERNS - OPERATOR_RESERVED_PATTERNS;
        if (entries.size + made.length >= bound) throw new Error(processRefusal(owner));
        re = new (re2())(pattern, flags);
        made.push(re);
      }
      if (!kept(key)) newForOwner++;
      taken.set(key, re);
      return re;
    },
    commit() {
      if (taken.size === 0) return () => undefined;
      const counts = owned.get(owner) ?? new Map<string, number>();
      owned.set(owner, counts);
      for (const [key, re] of taken) {
        let entry = entries.get(key);
        if (entry?.weak.deref() !== re) {
          entry = { strong: re, weak: new WeakRef(re), refs: 0 };
          entries.set(key, entry);
          finalizer.register(re, { key, native: (re as unknown as Native).wrapper });
        }
        entry.strong = re;
        entry.refs++;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      const keys = [...taken.keys()];
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        holds.delete(release);
        for (const key of keys) {
          const entry = entries.get(key);
          if (entry && --entry.refs === 0) entry.strong = undefined;
          const left = (counts.get(key) ?? 1) - 1;
          if (left > 0) counts.set(key, left);
          else counts.delete(key);
        }
        if (counts.size === 0 && owned.get(owner) === counts) owned.delete(owner);
      };
      holds.set(release, { owner, keys });
      return release;
    },
    abort() {
      // Only the failed compile's code refers to them, and it is discarded.
      for (const re of made) (re as unknown as Native).wrapper.delete();
      made.length = 0;
      taken.clear();
    },
  };
}
