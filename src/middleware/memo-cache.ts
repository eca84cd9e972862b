import type { SessionScope } from '../store';
import { TenantShares, type SharedEntry } from '../store/tenant-shares';
import { LegacyResourceNames } from './memo-legacy-names';
import { MemoMarks, resourceGroup } from './memo-marks';

/** Options of {@link createMemoCache}. */
export interface MemoCacheOptions {
  /**
   * Entries kept; past it, down to nine tenths, the dead go, then the least recently used of the
   * tenants holding more than an equal share. Also bounds, alike, the resources' write generations
   * and the ended sessions remembered. @default 10000
   */
  readonly maxEntries?: number;
  /** Longest output kept, in characters; longer ones are not cached. @default 1000000 */
  readonly maxEntryChars?: number;
  /** Characters kept over all entries; past it, down to nine tenths, as for maxEntries. @default 64000000 */
  readonly maxTotalChars?: number;
  /** Clock, for tests. @default Date.now */
  readonly now?: () => number;
}

/** A cached output. */
export interface MemoValue {
  readonly text: string;
  readonly warnings?: readonly string[];
}

/** A cached output with the resource it read and its session's tenant (see MemoSource). */
export interface MemoEntry extends MemoValue {
  readonly resource?: string;
  readonly tenant?: string;
}

/** What an entry read, so that it goes when that changes or ends. */
export interface MemoSource {
  /** The resource the call read (its `resource_key` value), with its write generation read before the call ran. */
  readonly resource?: string;
  readonly generation?: number;
  /**
   * The session the call belongs to, with the cache's count of session ends read before the call
   * ran (`sessionEnds()`): EndSession of the session makes its entries unreachable, including one
   * set later by a read that was running when the session ended.
   */
  readonly session?: SessionScope;
  readonly sessionEnds?: number;
}

/** A bounded TTL cache of outputs, indexed by the resource each entry read. */
export interface MemoCache {
  get(key: string): MemoValue | undefined;
  /** What `get` would answer, without making the entry the most recently used (a read that skips its rate turn asks first). */
  peek(key: string): MemoEntry | undefined;
  /**
   * Caches `value` unless `source.resource` was written since `source.generation` was read, or
   * `source.session` ended since `source.sessionEnds` was read.
   */
  set(key: string, value: MemoValue, ttlMs: number, source?: MemoSource): void;
  /** The write generation of a resource, read before a cached read runs. */
  generation(resource: string): number;
  /**
   * How many sessions ended here so far, read before a cached read runs (see MemoSource); of
   * `tenant`'s, the newest mark of its session ends, which only another end of its own changes
   * (or its marks dropped whole: see {@link reading}).
   */
  sessionEnds(tenant?: string): number;
  /**
   * Notes that `tenant` reads now: its write generations and session ends are the last to be
   * dropped whole (MemoMarks), so that other tenants beyond maxEntries uncache neither its
   * running reads nor its entries.
   */
  reading(tenant: string): void;
  /**
   * Drops every entry that read `resource` and bumps its generation; returns how many went. The
   * name is kept (up to maxEntries of them, an equal share per tenant: the part of the name before
   * its first NUL, '' for none) whether or not anything read it: pass a short one (memoize hashes
   * a long `resource_key` value, after its tenant). One forgotten reads as the largest generation
   * its tenant forgot, so a read begun before is never cached. A hashed name as a replica older
   * than this one gives it (the hash alone) names the resource this one reads (memo-legacy-names.ts);
   * one no read here noted drops only the entries set under it as it is, with no mark.
   */
  evictResource(resource: string): number;
  /**
   * Ends a session (EndSession) in constant time: its entries are no longer served, and go when
   * next asked for or as the least recently used; reads of it running now are not cached.
   */
  endSession(scope: SessionScope): void;
  /** Entries held, those of ended sessions not yet gone included. */
  size(): number;
  /**
   * As if every resource were written and every session ended now: every entry goes, and no read
   * running now is cached. For announcements of writes and session ends that may have been missed.
   */
  forgetAll(): void;
  clear(): void;
}

interface Entry extends MemoEntry, SharedEntry {
  readonly key: string;
  /** The session's tenant, or '' for an entry of no session. */
  readonly tenant: string;
  readonly sessionId?: string;
  /** The count of session ends up to which the entry's session is known not to have ended. */
  checkedAt: number;
}

const hasSession = (entry: Entry): entry is Entry & SessionScope => entry.sessionId !== undefined;

/** Keys grouped by a name (a resource), so that a group can be dropped at once. */
function createKeyGroups() {
  const groups = new Map<string, Set<string>>();
  return {
    add(name: string | undefined, key: string): void {
      if (name === undefined) return;
      const keys = groups.get(name);
      if (keys) keys.add(key);
      else groups.set(name, new Set([key]));
    },
    delete(name: string | undefined, key: string): void {
      if (name === undefined) return;
      const keys = groups.get(name);
      keys?.delete(key);
      if (keys?.size === 0) groups.delete(name);
    },
    keys: (name: string): string[] => [...(groups.get(name) ?? [])],
    clear: () => groups.clear(),
  };
}

/**
 * Creates a memo cache; every bound has a default. Its entries, the resources' write generations and
 * the ended sessions it remembers are each bounded by an equal share per tenant (TenantShares,
 * MemoMarks): one tenant's reads, writes or session ends push out only its own once it holds more.
 */
export function createMemoCache(options: MemoCacheOptions = {}): MemoCache {
  const maxEntries = options.maxEntries ?? 10_000;
  const maxEntryChars = options.maxEntryChars ?? 1_000_000;
  const maxTotalChars = options.maxTotalChars ?? 64_000_000;
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();
  const shares = new TenantShares<Entry>({ maxEntries, maxChars: maxTotalChars });
  const byResource = createKeyGroups();
  // Writes and session ends are marked by counters that only grow, per tenant; a resource or an
  // ended session forgotten reads as the largest mark its tenant forgot, so a read begun before
  // is not cached and an entry checked before is not served (a miss, never a stale hit).
  const generations = new MemoMarks(maxEntries);
  const endedAt = new MemoMarks(maxEntries);
  // An old replica's write of a hashed resource, heard by its old name (see memo-legacy-names.ts).
  const legacyNames = new LegacyResourceNames(maxEntries, (resource) => void dropResource(resource));
  const endedSince = (scope: SessionScope, count: number): boolean => count < endedAt.forgotten(scope.tenant) || (endedAt.last(scope.tenant, scope.sessionId) ?? 0) > count;
  /** Whether an entry's session ended since it was checked; a live one is checked again now. */
  const ended = (entry: Entry): boolean => {
    if (hasSession(entry) && endedSince(entry, entry.checkedAt)) return true;
    entry.checkedAt = endedAt.marks;
    return false;
  };
  /** Whether an entry may no longer be served, whatever its TTL (its session ended): it goes first when room is needed. */
  const gone = (entry: Entry): boolean => entry.checkedAt !== endedAt.marks && hasSession(entry) && endedSince(entry, entry.checkedAt);
  // Entries are gone only by a session end: a pass looks for them (every entry, whether it can
  // have expired or not) only when a session ended since the last pass that looked began. With
  // every call's result new (the cache always full, a pass each 1,000 sets), a set took ~0.7-1.0 µs
  // in a loop of the cache alone, and ~1.0-1.4 µs when every pass looked.
  let lookedAt = -1;
  let passLooks = false;
  const goneIn = (): typeof gone | undefined => {
    if (!shares.passing) {
      passLooks = endedAt.marks !== lookedAt;
      lookedAt = endedAt.marks;
    }
    return passLooks ? gone : undefined;
  };

  const remove = (key: string) => {
    const entry = entries.get(key);
    if (!entry) return;
    entries.delete(key);
    shares.delete(entry);
    byResource.delete(entry.resource, key);
  };
  const dropEntries = () => {
    entries.clear();
    shares.clear();
    byResource.clear();
  };
  const removeAll = (keys: readonly string[]) => {
    for (const key of keys) remove(key);
    return keys.length;
  };
  /** Evicts an entry TenantShares chose (always the one its key holds: one replaced was uncounted first). */
  const evict = (entry: Entry) => (entries.get(entry.key) === entry ? remove(entry.key) : void shares.delete(entry));

  /** Bumps the generation of `resource` and drops every entry that read it (see evictResource). */
  const dropResource = (resource: string): number => {
    generations.mark(resourceGroup(resource), resource);
    return removeAll(byResource.keys(resource));
  };

  /** The entry of `key` if it may be served; one gone stale is removed. */
  const live = (key: string): Entry | undefined => {
    const entry = entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= now() || (entry.checkedAt !== endedAt.marks && ended(entry))) {
      remove(key);
      return undefined;
    }
    return entry;
  };

  return {
    get(key) {
      const entry = live(key);
      if (!entry) return undefined;
      // The most recently used of its tenant last (O(1)); its size and groups stay as they are.
      shares.delete(entry);
      shares.add(entry);
      return entry;
    },
    peek: live,
    set(key, value, ttlMs, source = {}) {
      const { resource, generation, session, sessionEnds } = source;
      if (ttlMs <= 0 || value.text.length > maxEntryChars) return;
      if (resource !== undefined && generation !== undefined && generations.at(resourceGroup(resource), resource) !== generation) return;
      if (session !== undefined && sessionEnds !== undefined && sessionEnds !== endedAt.marks && endedSince(session, sessionEnds)) return;
      remove(key);
      const t = now();
      const entry: Entry = { key, text: value.text, warnings: value.warnings, expiresAt: t + ttlMs, chars: value.text.length, resource, tenant: session?.tenant ?? '', sessionId: session?.sessionId, checkedAt: endedAt.marks };
      entries.set(key, entry);
      shares.add(entry);
      byResource.add(resource, key);
      // Past a bound, down to nine tenths of it: the dead first, then the least recently used of the tenants over an equal share.
      if (shares.over) shares.trim(entry, t, evict, goneIn());
    },
    generation(resource) {
      // Read before it is noted: noting may push this very name out, and that bumps it after.
      const generation = generations.at(resourceGroup(resource), resource);
      legacyNames.note(resource);
      return generation;
    },
    sessionEnds: (tenant) => (tenant === undefined ? endedAt.marks : endedAt.newest(tenant)),
    reading(tenant) {
      generations.touch(tenant);
      endedAt.touch(tenant);
    },
    evictResource(resource) {
      // A name with no NUL that no read here noted (another new replica's old-format duplicate):
      // no read of it runs (memo-legacy-names.ts), so no mark; only entries set under it as it is.
      const name = legacyNames.current(resource);
      return name === undefined ? removeAll(byResource.keys(resource)) : dropResource(name);
    },
    endSession(scope) {
      endedAt.mark(scope.tenant, scope.sessionId);
    },
    size: () => entries.size,
    forgetAll() {
      dropEntries();
      generations.markAll();
      endedAt.markAll();
    },
    clear() {
      dropEntries();
      generations.clear();
      endedAt.clear();
      // The old names stay (bounded): a read running across the clear may still be cached.
    },
  };
}
