import type { ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp, startToolServer, type ToolRoute, type ToolServer } from '../helpers/servers';

// Two dispatch apps sharing one real Redis, and the HTTP tool server their tools call: the setup
// of the tests of policies shared by every replica (concurrency caps, rate limits).

export type Replica = Awaited<ReturnType<typeof startApp>>;

export interface ReplicaPair {
  readonly redis: TestRedis;
  readonly tools: ToolServer;
  readonly a: Replica;
  readonly b: Replica;
}

/** Starts a private Redis, a tool server with `routes`, and two apps on the config `yaml(toolsUrl)`. */
export async function startReplicaPair(yaml: (toolsUrl: string) => string, routes: Record<string, ToolRoute>): Promise<ReplicaPair> {
  const redis = await startRedis({ own: true });
  const tools = await startToolServer(routes);
  const a = await startApp(yaml(tools.url), { redisUrl: redis.url });
  const b = await startApp(yaml(tools.url), { redisUrl: redis.url });
  return { redis, tools, a, b };
}

/** Closes what {@link startReplicaPair} started (what of it did start); `redis` may be a cluster. */
export async function closeReplicaPair(pair: Partial<Omit<ReplicaPair, 'redis'>> & { readonly redis?: { close(): Promise<unknown> } }): Promise<void> {
  await pair.a?.close();
  await pair.b?.close();
  await pair.tools?.close();
  await pair.redis?.close();
}

let calls = 0;
/** One call of `name` on `app`, in a session of its own, with arguments no other call has. */
export function callOn(app: Replica, name: string): Promise<ToolResult> {
  calls++;
  return app.dispatch.dispatch({ sessionId: `s${calls}`, calls: [{ id: 'c', name, arguments: `{"n":${calls}}` }] }).then((r) => r.results[0]!);
}
