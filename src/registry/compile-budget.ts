import type { Logger } from '../log';

const MINUTE_MS = 60_000;
/** Past this many tenants held, those whose budget is whole again are dropped (they hold nothing). */
const SWEEP_AT = 4096;

/**
 * A tenant's budget of input schema bytes compiled on this replica (a changed schema of 220 KB
 * takes 0.8-1.5 s of CPU, in the compiler's worker thread, and a worker may hello with another on
 * every reconnection). A token bucket per tenant: it holds up to `perMinute` bytes and fills again
 * at `perMinute` bytes a minute.
 */
export interface CompileBudget {
  /**
   * Why compiling `bytes` more for the tenant now would pass its budget, and how long until it
   * would not (`retryAfterMs`), or undefined. A tenant whose budget is whole may compile one
   * registration of any size (each is bounded by max_schema_bytes_per_tenant), so a budget below
   * one registration never refuses it for ever.
   */
  excess(tenant: string, bytes: number): { readonly message: string; readonly retryAfterMs: number } | undefined;
  /**
   * Counts `bytes` compiled for the tenant. `remote` (another replica's registration, which that
   * replica admitted and this one cannot refuse) may take the tenant past its budget, down to a
   * whole budget owed; that is logged (warn, once until it is within it again).
   */
  charge(tenant: string, bytes: number, remote: boolean): void;
}

/** Creates a {@link CompileBudget} of `perMinute` bytes per tenant; undefined: no bound. */
export function createCompileBudget(perMinute: number | undefined, logger: Logger, now: () => number = Date.now): CompileBudget {
  if (perMinute === undefined) return { excess: () => undefined, charge: () => undefined };
  // What each tenant has left, when it was counted, and whether its going over was logged.
  const buckets = new Map<string, { left: number; at: number; warned: boolean }>();
  const leftNow = (tenant: string, at: number): number => {
    const bucket = buckets.get(tenant);
    return bucket === undefined ? perMinute : Math.min(perMinute, bucket.left + ((at - bucket.at) * perMinute) / MINUTE_MS);
  };
  const sweep = (at: number) => {
    if (buckets.size <= SWEEP_AT) return;
    for (const tenant of [...buckets.keys()]) if (leftNow(tenant, at) >= perMinute) buckets.delete(tenant);
  };
  return {
    excess(tenant, bytes) {
      const left = leftNow(tenant, now());
      if (bytes <= left || left >= perMinute) return undefined;
      const seconds = Math.max(1, Math.ceil(((Math.min(bytes, perMinute) - left) * MINUTE_MS) / perMinute / 1000));
      const message =
        `tenant "${tenant}" would compile ${bytes} bytes of new or changed input schemas, over what is left of its budget of ${perMinute} bytes compiled per minute on this replica ` +
        `(${Math.max(0, Math.floor(left))} bytes; limits.max_schema_bytes_compiled_per_minute_per_tenant); try again in ${seconds} s. A tool registered again unchanged is not compiled and not counted`;
      return { message, retryAfterMs: seconds * 1000 };
    },
    charge(tenant, bytes, remote) {
      if (bytes === 0) return;
      const at = now();
      const before = leftNow(tenant, at);
      const left = Math.max(-perMinute, before - bytes);
      const bucket = buckets.get(tenant) ?? { left, at, warned: false };
      buckets.set(tenant, Object.assign(bucket, { left, at, warned: bucket.warned && before < 0 }));
      if (left < 0 && remote && !bucket.warned) {
        bucket.warned = true;
        logger.warn("another replica's registrations took a tenant past its budget of schema bytes compiled here; they are applied (that replica admitted them), and registrations here wait until it fills again", {
          tenant, owedBytes: Math.ceil(-left), maxSchemaBytesCompiledPerMinutePerTenant: perMinute,
        });
      }
      sweep(at);
    },
  };
}
