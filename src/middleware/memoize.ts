import { canonicalJson, readPointer } from '../json';
import { memoStillServes, type Middleware } from '../pipeline';
import { hashKeyMaterial } from '../store';
import type { MemoCache } from './memo-cache';
import { legacyResourceName } from './memo-legacy-names';
import { breaksJsonContract } from './result-verification';

/** A resource name up to this many characters is kept as it is, unhashed. */
const RESOURCE_NAME_MAX = 256;

/**
 * The resource a call touches, per tenant: tenant, NUL and the canonical JSON of its `resource_key`
 * value, or undefined. The cache keeps a name for every write, so a long one is hashed, after its
 * tenant (the cache bounds names per tenant, by the part before the NUL): tenant, NUL, '#' and the
 * hash; no JSON starts with '#', so the two forms never meet.
 */
function resourceOf(tenant: string, pointer: string, args: unknown): string | undefined {
  if (pointer === '') return undefined;
  const value = readPointer(args, pointer);
  if (value === undefined) return undefined;
  const name = `${tenant}\u0000${canonicalJson(value)}`;
  return name.length <= RESOURCE_NAME_MAX ? name : `${tenant}\u0000#${hashKeyMaterial(name)}`;
}

/**
 * Memoize for read-only tools. The key is the call's local key (its idempotency key's material:
 * tenant, session, tool and the canonical arguments; hashed when long), the TTL the tool's
 * `memoize_ttl_seconds`; only successes are cached (not an answer a `returns_json` tool broke its
 * contract with), and a hit is marked `cached`. EndSession ends a session's entries, and a read
 * still running then is not cached (see {@link MemoCache.endSession}). A side-effecting call
 * whose `resource_key` value equals a cached read's evicts it, before it runs and again after, and
 * a read that overlapped such a write is not cached; once it has run, `written` is told the
 * resource (to tell the other replicas). A tool declared `skip_memoize` (its answer changes from
 * one call to the next: a job's status) is neither looked up nor stored: every call reaches it.
 */
export function memoize(cache: MemoCache, written?: (resource: string) => void): Middleware {
  // Promise chains rather than an async function: one continuation per call instead of an async
  // frame and its promise, on every read-only call.
  return (next) => (invocation) => {
    const { tool, args, ctx } = invocation;
    // Before its resource is read: such a read neither looks up nor evicts anything.
    if (tool.readOnly && tool.spec.skipMemoize) return next(invocation);
    const resource = resourceOf(ctx.tenant, tool.spec.resourceKey, args);
    if (!tool.readOnly) {
      if (resource === undefined) return next(invocation);
      cache.evictResource(resource);
      return next(invocation).finally(() => {
        cache.evictResource(resource);
        written?.(resource);
        // Under its old name too, for replicas not yet upgraded (see memo-legacy-names.ts).
        const legacy = legacyResourceName(resource);
        if (legacy !== undefined) written?.(legacy);
      });
    }
    // An entry peeked before the store step (the attempt took no slot or turn) is served though it
    // went since, unless what it read changed: its resource written, a session ended.
    const { memoized } = invocation;
    cache.reading(ctx.tenant);
    const hit = cache.get(ctx.localKey) ?? (memoized && memoStillServes(cache, memoized) ? memoized.output : undefined);
    if (hit) return Promise.resolve({ text: hit.text, warnings: hit.warnings, cached: true });
    const generation = resource === undefined ? undefined : cache.generation(resource);
    const sessionEnds = cache.sessionEnds();
    return next(invocation).then((output) => {
      // Verification (outside) fails an answer that is not the JSON its tool promised: cached, it
      // would fail every identical call for the TTL without the tool being asked again.
      if (breaksJsonContract(tool.spec.returnsJson, output)) return output;
      cache.set(ctx.localKey, output, tool.memoizeTtlSeconds * 1000, { resource, generation, session: ctx, sessionEnds });
      return output;
    });
  };
}
