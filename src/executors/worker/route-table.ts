import type { RedisClient as Redis } from '../../store/redis';

/** Where worker-hosted tools live: per (tenant, tool), the replicas whose workers host it. */
export interface RouteTable {
  /** Says (again) that this replica hosts these tools, for the route TTL. */
  advertise(entries: readonly { tenant: string; tool: string }[]): Promise<void>;
  withdraw(tenant: string, tool: string): Promise<void>;
  /** Other replicas hosting the tool, whose advertisement has not expired. */
  lookup(tenant: string, tool: string): Promise<string[]>;
}

/** Key of a tool's route hash: field = replica id, value = epoch ms the advertisement expires. */
export const routeKey = (tenant: string, tool: string) => `dispatch:worker:route:${encodeURIComponent(tenant)}:${tool}`;

/** A route table in Redis hashes; a hash lives `ttlMs` past its last refresh. */
export function createRouteTable(redis: Redis, replicaId: string, ttlMs: number): RouteTable {
  return {
    async advertise(entries) {
      if (entries.length === 0) return;
      const expires = String(Date.now() + ttlMs);
      // A pipeline per route: on a Cluster one pipeline may only hold keys of one node, and the
      // routes of two tools are on any two.
      const results = await Promise.all(entries.map(({ tenant, tool }) => redis.pipeline().hset(routeKey(tenant, tool), replicaId, expires).pexpire(routeKey(tenant, tool), ttlMs).exec()));
      const failed = results.flatMap((r) => r ?? []).find(([error]) => error);
      if (failed) throw failed[0];
    },
    async withdraw(tenant, tool) {
      await redis.hdel(routeKey(tenant, tool), replicaId);
    },
    async lookup(tenant, tool) {
      const fields = await redis.hgetall(routeKey(tenant, tool));
      const now = Date.now();
      return Object.entries(fields)
        .filter(([replica, expires]) => replica !== replicaId && Number(expires) > now)
        .map(([replica]) => replica);
    },
  };
}
