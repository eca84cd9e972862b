import { evictOldest, TRIM_TO } from '../store';
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

/** A bounded TTL cache of outputs, indexed by the resource each entry read. */
export interface MemoCache {
  get(key: string): MemoValue | undefined;
  /** Caches `value` unless `resource` was written since `generation` was read. */
  set(key: string, value: MemoValue, ttlMs: number, resource?: string, generation?: number): void;
  /** The write generation of a resource, read before a cached read runs. */
  generation(resource: string): number;
  /** Drops every entry that read `resource` and bumps its generation; returns how many went. */
  evictResource(resource: string): number;
  size(): number;
  clear(): void;
}


interface Entry extends MemoValue {
  readonly expiresAt: number;
  readonly resource?: string;
}

/** Creates a memo cache; every bound has a default. */
export function createMemoCache(options: MemoCacheOptions = {}): MemoCache {
  const maxEntries = options.maxEntries ?? 10_000;
  const maxEntryChars = options.maxEntryChars ?? 1_000_000;
  const maxTotalChars = options.maxTotalChars ?? 64_000_000;
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();
  const byResource = new Map<string, Set<string>>();
  const generations = new Map<string, number>();
  let totalChars = 0;

  const index = (key: string, resource: string | undefined) => {
    if (resource === undefined) return;
    const keys = byResource.get(resource);
    if (keys) keys.add(key);
    else byResource.set(resource, new Set([key]));
  };
  const remove = (key: string) => {
    const entry = entries.get(key);
    if (!entry) return;
    entries.delete(key);
    totalChars -= entry.text.length;
    if (entry.resource === undefined) return;
    const keys = byResource.get(entry.resource);
    keys?.delete(key);
    if (keys?.size === 0) byResource.delete(entry.resource);
  };

  // Past a bound, the least recently used go down to nine tenths of it, in one pass.
  const trim = () => evictOldest(entries, () => entries.size > maxEntries * TRIM_TO || totalChars > maxTotalChars * TRIM_TO, remove);

  return {
    get(key) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      remove(key);
      if (entry.expiresAt <= now()) return undefined;
      entries.set(key, entry);
      totalChars += entry.text.length;
      index(key, entry.resource);
      return entry;
    },
    set(key, value, ttlMs, resource, generation) {
      if (ttlMs <= 0 || value.text.length > maxEntryChars) return;
      if (resource !== undefined && generation !== undefined && (generations.get(resource) ?? 0) !== generation) return;
      remove(key);
      entries.set(key, { text: value.text, warnings: value.warnings, expiresAt: now() + ttlMs, resource });
      totalChars += value.text.length;
      index(key, resource);
      if (entries.size > maxEntries || totalChars > maxTotalChars) trim();
    },
    generation: (resource) => generations.get(resource) ?? 0,
    evictResource(resource) {
      const next = (generations.get(resource) ?? 0) + 1;
      generations.delete(resource);
      generations.set(resource, next);
      while (generations.size > maxEntries) generations.delete(generations.keys().next().value as string);
      const keys = [...(byResource.get(resource) ?? [])];
      for (const key of keys) remove(key);
      return keys.length;
    },
    size: () => entries.size,
    clear() {
      entries.clear();
      byResource.clear();
      generations.clear();
      totalChars = 0;
    },
  };
}
