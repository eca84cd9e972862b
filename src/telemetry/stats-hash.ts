import { addCounters, emptyCounters, type ToolCounters } from './tool-stats';

/** The Redis keys of one tenant's shared tool counts; both share the tenant's hash tag (one cluster slot). */
export interface StatsKeys {
  /** A hash of `tool\0counter` -> count, over every replica's flushed calls. */
  readonly counts: string;
  /** The sequence number of the last batch this replica flushed for the tenant. */
  readonly flushed: string;
}

/** The key of a tenant's bucket width (s), set by the first flush (flush-stats.lua); same slot. */
export const widthKey = (counts: string): string => `${counts}:bucket_seconds`;
/**
 * The key of a tenant's window hash (same slot): a field per tool, its counts per bucket numbered
 * by Redis' TIME, `B:<packed>` joined by `;`, newest first (flush-stats.lua, {@link packCounts}).
 */
export const windowHashKey = (counts: string): string => `${counts}:window`;

/** A counter's name in the hash. */
const FIELD: Readonly<Record<keyof ToolCounters, string>> = {
  calls: 'calls',
  attempts: 'attempts',
  validationFailures: 'validation_failures',
  timeouts: 'timeouts',
  retries: 'retries',
  idempotentHits: 'idempotent_hits',
  bounded: 'bounded',
  unexpected: 'unexpected',
  // Last: a packed value of a replica that predates it has 8 counts, read as 0 errors.
  errors: 'errors',
};
const COUNTER_OF = new Map(Object.entries(FIELD).map(([counter, field]) => [field, counter as keyof ToolCounters]));
const SEPARATOR = '\u0000';

/**
 * Keys of a tenant's counts: `dispatch:stats:{<tenant>}` with the tenant base64url-encoded (and
 * prefixed, so the tag is never empty), so no `{`, `}` or `:` in a tenant can break the tag.
 */
export function statsKeys(tenant: string, replica: string, prefix = 'dispatch'): StatsKeys {
  const counts = `${prefix}:stats:{t${Buffer.from(tenant, 'utf8').toString('base64url')}}`;
  return { counts, flushed: `${counts}:flushed:${replica}` };
}

/** The hash increments of a tenant's counts: `field, delta` pairs, zero counts left out. */
export function countFields(tools: ReadonlyMap<string, Readonly<ToolCounters>>): string[] {
  const out: string[] = [];
  for (const [tool, counters] of tools) {
    for (const counter of Object.keys(FIELD) as (keyof ToolCounters)[]) {
      if (counters[counter] !== 0) out.push(`${tool}${SEPARATOR}${FIELD[counter]}`, String(counters[counter]));
    }
  }
  return out;
}

/** The `tool, deltas` pairs of a batch for flush-stats.lua: a tool's 9 counts packed. */
export function packedFields(tools: ReadonlyMap<string, Readonly<ToolCounters>>): string[] {
  const out: string[] = [];
  for (const [tool, counters] of tools) out.push(tool, packCounts(counters));
  return out;
}

const COUNTERS = Object.keys(FIELD) as (keyof ToolCounters)[];

/** A tool's 9 counts as one bucket-hash value: comma-separated, in {@link FIELD}'s order. */
export const packCounts = (counters: Readonly<ToolCounters>): string => COUNTERS.map((counter) => counters[counter]).join(',');

/** Counts from `values` in {@link FIELD}'s order (a packed value split, or an HMGET of {@link toolFields}); undefined when none is a count. */
function countsOf(values: readonly (string | null | undefined)[]): ToolCounters | undefined {
  const counters = emptyCounters();
  let any = false;
  COUNTERS.forEach((counter, i) => {
    const count = Number(values[i] ?? NaN);
    if (values[i] === '' || !Number.isSafeInteger(count)) return;
    counters[counter] = count;
    any = true;
  });
  return any ? counters : undefined;
}

/** A packed value's counts (undefined when it holds none). */
const unpackCounts = (packed: string | null | undefined): ToolCounters | undefined => (packed ? countsOf(packed.split(',')) : undefined);

/** One tool's counts from an HMGET of its {@link toolFields} (undefined when it has none). */
export const hmgetCounts = (values: readonly (string | null)[]): ToolCounters | undefined => countsOf(values);

/** The sum of a window-hash value's buckets from `oldest` on (undefined when none is). */
export function windowCounts(value: string | null | undefined, oldest: number): ToolCounters | undefined {
  let sum: ToolCounters | undefined;
  for (const segment of value ? value.split(';') : []) {
    const colon = segment.indexOf(':');
    if (Number(segment.slice(0, colon)) < oldest) break; // newest first: the rest are older
    const counters = unpackCounts(segment.slice(colon + 1));
    if (counters) sum = addCounters(sum, counters);
  }
  return sum;
}

/** Every field a tool's counts may take in the hash (what a removal deletes). */
export function toolFields(tool: string): string[] {
  return Object.values(FIELD).map((counter) => `${tool}${SEPARATOR}${counter}`);
}

/** The fields one tool's counts take in the hash, every counter counted. */
export const FIELDS_PER_TOOL = Object.keys(FIELD).length;

/** A tenant's counts per tool from its hash; fields that are not counts are ignored. */
export function parseCounts(hash: Readonly<Record<string, string>>): Map<string, ToolCounters> {
  const tools = new Map<string, ToolCounters>();
  for (const [field, value] of Object.entries(hash)) {
    const at = field.lastIndexOf(SEPARATOR);
    const counter = COUNTER_OF.get(field.slice(at + 1));
    const count = Number(value);
    if (at <= 0 || counter === undefined || !Number.isSafeInteger(count)) continue;
    const tool = field.slice(0, at);
    let counters = tools.get(tool);
    if (!counters) tools.set(tool, (counters = emptyCounters()));
    counters[counter] += count;
  }
  return tools;
}

/**
 * Adds every tool's counts of `from` into `into`, each sum a new object: the counters `into` holds
 * are never changed (they may be a read's kept snapshot, served again to later reads). Before, they
 * were summed in place, so each GetToolStats answered from a kept read added this replica's
 * unflushed counts to it once more: two reads within readKeepMs counted them twice.
 */
export function addTools(into: Map<string, Readonly<ToolCounters>>, from: ReadonlyMap<string, Readonly<ToolCounters>>): void {
  for (const [tool, counters] of from) {
    const had = into.get(tool);
    const sum = addCounters(undefined, counters);
    into.set(tool, had ? addCounters(sum, had) : sum);
  }
}
