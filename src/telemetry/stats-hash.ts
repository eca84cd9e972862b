import { addCounters, emptyCounters, type ToolCounters } from './tool-stats';

/** The Redis keys of one tenant's shared tool counts; both share the tenant's hash tag (one cluster slot). */
export interface StatsKeys {
  /** A hash of `tool\0counter` -> count, over every replica's flushed calls. */
  readonly counts: string;
  /** The sequence number of the last batch this replica flushed for the tenant. */
  readonly flushed: string;
}

/**
 * The hash of a tenant's counts flushed in one bucket of the rate window (same fields as `counts`,
 * same slot): `<counts>:w<bucketMs>:<bucket>`, expiring once the bucket has left the window.
 */
export const windowKey = (counts: string, bucketMs: number, bucket: number): string => `${counts}:w${bucketMs}:${bucket}`;

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

/** Adds every tool's counts of `from` into `into`. */
export function addTools(into: Map<string, ToolCounters>, from: ReadonlyMap<string, Readonly<ToolCounters>>): void {
  for (const [tool, counters] of from) into.set(tool, addCounters(into.get(tool), counters));
}
