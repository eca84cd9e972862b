import { Cluster } from 'ioredis';
import { TENANT_SESSIONS_BATCH } from '../local-session-key';
import { StoreUnavailableError } from '../store-refusal';
import type { RedisClient } from './connect';
import { storeCall } from './store-call';

/** Session ids remembered per walk, so a session found by several keys is handed out once; past it, again (harmless). */
const MAX_SEEN = 100_000;

/**
 * The keys of a session that EndSession leaves (end-session.lua): its end mark, and the short-lived
 * marks of counted calls and loop probes, each gone within its call's lease. A session holding only
 * these is not handed out: ending it again would change nothing but renew its mark.
 */
const LEFT_BY_END = /^\}:(?:ended$|budget-mark:|probe:)/;

/** Redis Cluster's hash slots. */
const CLUSTER_SLOTS = 16_384;

/**
 * The masters to walk: the client itself, or every master of a Cluster, once its slot map covers
 * every slot (a Cluster client still connecting, or a slot left without a master, would give a walk
 * that misses sessions and answers as if it had ended them all).
 */
function mastersOf(client: RedisClient): readonly Pick<RedisClient, 'scan'>[] {
  if (!(client instanceof Cluster)) return [client];
  const masters = client.nodes('master');
  let covered = 0;
  for (let slot = 0; slot < CLUSTER_SLOTS; slot++) if ((client.slots[slot]?.length ?? 0) > 0) covered++;
  if (client.status !== 'ready' || masters.length === 0 || covered < CLUSTER_SLOTS) {
    throw new StoreUnavailableError(`redis cluster is not ready to walk every master (${client.status}, ${masters.length} masters known, ${covered} of ${CLUSTER_SLOTS} slots mapped)`, { reason: 'unreachable' });
  }
  return masters;
}

/** `text` as a literal in a SCAN pattern: `*`, `?`, `[`, `]` and `\` escaped. */
const globLiteral = (text: string): string => text.replace(/[*?[\]\\]/g, '\\$&');

/**
 * The ids of `tenant`'s sessions in Redis (Store.tenantSessions): SCAN over every master (each
 * node of a Cluster) for the keys of the tenant's sessions, `<prefix>:{<tenant>:<session>}:...`
 * (both base64url, see sessionKeys), each session handed out once per walk (up to MAX_SEEN of
 * them). A session whose only keys are those EndSession leaves (LEFT_BY_END) is not handed out.
 * Each SCAN step is a store step with its timeout.
 */
export async function* scanTenantSessions(client: RedisClient, tenant: string, prefix: string, timeoutMs: number): AsyncGenerator<string[]> {
  const head = `${prefix}:{${Buffer.from(tenant, 'utf8').toString('base64url')}:`;
  const match = `${globLiteral(head)}*`;
  const seen = new Set<string>();
  for (const node of mastersOf(client)) {
    let cursor = '0';
    do {
      const [next, keys] = await storeCall("a scan of the tenant's sessions", timeoutMs, () => node.scan(cursor, 'MATCH', match, 'COUNT', TENANT_SESSIONS_BATCH));
      cursor = next;
      const found: string[] = [];
      for (const key of keys) {
        const end = key.indexOf('}', head.length);
        if (end < 0 || LEFT_BY_END.test(key.slice(end))) continue;
        const encoded = key.slice(head.length, end);
        if (seen.has(encoded)) continue;
        if (seen.size >= MAX_SEEN) seen.clear();
        seen.add(encoded);
        found.push(Buffer.from(encoded, 'base64url').toString('utf8'));
      }
      if (found.length > 0) yield found;
    } while (cursor !== '0');
  }
}
