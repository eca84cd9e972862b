import { evictOldest, localSessionKey, TRIM_TO, type SessionScope } from '../store';

/** Options of {@link createMemoCache}. */
export interface MemoCacheOptions {
  /**
   * Entries kept; past it the least recently used tenth goes. Also bounds the resource generations
   * and the ended sessions remembered. @default 10000
   */
  readonly maxEntries?: number;
  /** Longest output kept, in characters; longer ones are not cached. @default 1000000 */
  readonly maxEntryChars?: number;
  /** Characters kept over all entries; past it the least recently used go, down to nine tenths. @default 64000000 */
  readonly maxTotalChars?: number;
  /** Clock, for tests. @default Date.now */
  readonly now?: () => number;
}

/** A cached output. */
export interface MemoValue {
  readonly text: string;
  readonly warnings?: readonly string[];
}

/** A cached output with the resource it read (see MemoSource). */
export interface MemoEntry extends MemoValue {
  readonly resource?: string;
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
  /** How many sessions ended here so far, read before a cached read runs (see MemoSource). */
  sessionEnds(): number;
  /**
   * Drops every entry that read `resource` and bumps its generation; returns how many went. The
   * name is kept (up to maxEntries of them) whether or not anything read it: pass a short one
   * (memoize hashes a long `resource_key` value).
   */
  evictResource(resource: string): number;
  /**
   * Ends a session (EndSession) in constant time: its entries are no longer served, and go when
   * next asked for or as the least recently used; reads of it running now are not cached.
   */
  endSession(scope: SessionScope): void;
  /** Entries held, those of ended sessions not yet gone included. */
  size(): number;
  clear(): void;
}

interface Entry extends MemoEntry, Partial<SessionScope> {
  readonly expiresAt: number;
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

/** Creates a memo cache; every bound has a default. */
export function createMemoCache(options: MemoCacheOptions = {}): MemoCache {
  const maxEntries = options.maxEntries ?? 10_000;
  const maxEntryChars = options.maxEntryChars ?? 1_000_000;
  const maxTotalChars = options.maxTotalChars ?? 64_000_000;
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();
  const byResource = createKeyGroups();
  const generations = new Map<string, number>();
  let totalChars = 0;
  // Session ends are counted; each ended session keeps the count at its last end, for the latest
  // maxEntries sessions ended. An entry checked before the latest end forgotten may be of that
  // session: it is not served (a miss, never a stale hit).
  let ends = 0;
  const endedAt = new Map<string, number>();
  let forgotten = 0;
  const endedSince = (scope: SessionScope, count: number): boolean => count < forgotten || (endedAt.get(localSessionKey(scope)) ?? 0) > count;
  /** Whether an entry's session ended since it was checked; a live one is checked again now. */
  const ended = (entry: Entry): boolean => {
    if (hasSession(entry) && endedSince(entry, entry.checkedAt)) return true;
    entry.checkedAt = ends;
    return false;
  };

  const remove = (key: string) => {
    const entry = entries.get(key);
    if (!entry) return;
    entries.delete(key);
    totalChars -= entry.text.length;
    byResource.delete(entry.resource, key);
  };
  const removeAll = (keys: readonly string[]) => {
    for (const key of keys) remove(key);
    return keys.length;
  };

  // Past a bound, the least recently used go down to nine tenths of it, in one pass.
  const trim = () => evictOldest(entries, () => entries.size > maxEntries * TRIM_TO || totalChars > maxTotalChars * TRIM_TO, remove);

  /** The entry of `key` if it may be served; one gone stale is removed. */
  const live = (key: string): Entry | undefined => {
    const entry = entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= now() || (entry.checkedAt !== ends && ended(entry))) {
      remove(key);
      return undefined;
    }
    return entry;
  };

  return {
    get(key) {
      const entry = live(key);
      if (!entry) return undefined;
      // The most recently used last; its size and groups stay as they are.
      entries.delete(key);
      entries.set(key, entry);
      return entry;
    },
    peek: live,
    set(key, value, ttlMs, source = {}) {
      const { resource, generation, session, sessionEnds } = source;
      if (ttlMs <= 0 || value.text.length > maxEntryChars) return;
      if (resource !== undefined && generation !== undefined && (generations.get(resource) ?? 0) !== generation) return;
      if (session !== undefined && sessionEnds !== undefined && sessionEnds !== ends && endedSince(session, sessionEnds)) return;
      remove(key);
      const entry: Entry = { text: value.text, warnings: value.warnings, expiresAt: now() + ttlMs, resource, tenant: session?.tenant, sessionId: session?.sessionId, checkedAt: ends };
      entries.set(key, entry);
      totalChars += value.text.length;
      byResource.add(resource, key);
      if (entries.size > maxEntries || totalChars > maxTotalChars) trim();
    },
    generation: (resource) => generations.get(resource) ?? 0,
    sessionEnds: () => ends,
    evictResource(resource) {
      const next = (generations.get(resource) ?? 0) + 1;
      generations.delete(resource);
      generations.set(resource, next);
      while (generations.size > maxEntries) generations.delete(generations.keys().next().value as string);
      return removeAll(byResource.keys(resource));
    },
    endSession(scope) {
      const name = localSessionKey(scope);
      endedAt.delete(name);
      endedAt.set(name, ++ends);
      if (endedAt.size > maxEntries) {
        const [oldest, at] = endedAt.entries().next().value as [string, number];
        endedAt.delete(oldest);
        forgotten = at;
      }
    },
    size: () => entries.size,
    clear() {
      entries.clear();
      byResource.clear();
      generations.clear();
      endedAt.clear();
      forgotten = ends;
      totalChars = 0;
    },
  };
}
