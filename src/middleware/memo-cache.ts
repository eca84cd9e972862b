import { evictOldest, localSessionKey, TRIM_TO, type SessionScope } from '../store';

/** Options of {@link createMemoCache}. */
export interface MemoCacheOptions {
  /** Entries kept; past it the least recently used tenth goes. @default 10000 */
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

/** What an entry read, so that it goes when that changes or ends. */
export interface MemoSource {
  /** The resource the call read (its `resource_key` value), with its write generation read before the call ran. */
  readonly resource?: string;
  readonly generation?: number;
  /** The session the call belongs to: EndSession drops its entries. */
  readonly session?: SessionScope;
}

/** A bounded TTL cache of outputs, indexed by the resource each entry read and by its session. */
export interface MemoCache {
  get(key: string): MemoValue | undefined;
  /** Caches `value` unless `source.resource` was written since `source.generation` was read. */
  set(key: string, value: MemoValue, ttlMs: number, source?: MemoSource): void;
  /** The write generation of a resource, read before a cached read runs. */
  generation(resource: string): number;
  /** Drops every entry that read `resource` and bumps its generation; returns how many went. */
  evictResource(resource: string): number;
  /** Drops every entry of a session (EndSession), in time proportional to their number; returns how many went. */
  endSession(scope: SessionScope): number;
  size(): number;
  clear(): void;
}

interface Entry extends MemoValue {
  readonly expiresAt: number;
  readonly resource?: string;
  readonly session?: string;
}

/** Keys grouped by a name (a resource, a session), so that a group can be dropped at once. */
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
  const bySession = createKeyGroups();
  const generations = new Map<string, number>();
  let totalChars = 0;

  const index = (key: string, entry: Entry) => {
    byResource.add(entry.resource, key);
    bySession.add(entry.session, key);
  };
  const remove = (key: string) => {
    const entry = entries.get(key);
    if (!entry) return;
    entries.delete(key);
    totalChars -= entry.text.length;
    byResource.delete(entry.resource, key);
    bySession.delete(entry.session, key);
  };
  const removeAll = (keys: readonly string[]) => {
    for (const key of keys) remove(key);
    return keys.length;
  };

  // Past a bound, the least recently used go down to nine tenths of it, in one pass.
  const trim = () => evictOldest(entries, () => entries.size > maxEntries * TRIM_TO || totalChars > maxTotalChars * TRIM_TO, remove);

  return {
    get(key) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (entry.expiresAt <= now()) {
        remove(key);
        return undefined;
      }
      // The most recently used last; its size and groups stay as they are.
      entries.delete(key);
      entries.set(key, entry);
      return entry;
    },
    set(key, value, ttlMs, source = {}) {
      const { resource, generation, session } = source;
      if (ttlMs <= 0 || value.text.length > maxEntryChars) return;
      if (resource !== undefined && generation !== undefined && (generations.get(resource) ?? 0) !== generation) return;
      remove(key);
      const entry: Entry = { text: value.text, warnings: value.warnings, expiresAt: now() + ttlMs, resource, session: session && localSessionKey(session) };
      entries.set(key, entry);
      totalChars += value.text.length;
      index(key, entry);
      if (entries.size > maxEntries || totalChars > maxTotalChars) trim();
    },
    generation: (resource) => generations.get(resource) ?? 0,
    evictResource(resource) {
      const next = (generations.get(resource) ?? 0) + 1;
      generations.delete(resource);
      generations.set(resource, next);
      while (generations.size > maxEntries) generations.delete(generations.keys().next().value as string);
      return removeAll(byResource.keys(resource));
    },
    endSession: (scope) => removeAll(bySession.keys(localSessionKey(scope))),
    size: () => entries.size,
    clear() {
      entries.clear();
      byResource.clear();
      bySession.clear();
      generations.clear();
      totalChars = 0;
    },
  };
}
