import { randomUUID } from 'node:crypto';
import { fromBinary, toBinary } from '@bufbuild/protobuf';
import { ToolSpecSchema, type ToolSpec } from '../../../gen/dispatch/v1/tool_pb';
import type { Logger } from '../../log';
import type { RegistryChange, ToolRegistry } from '../../registry';
import type { RedisClient } from './connect';
import { createOrderedPublisher } from './ordered-publisher';
import { registryKeys } from './session-keys';
import { createWatchedSubscriber, type SubscriberWatchOptions } from './watched-subscriber';

/**
 * Keeps the tenants' tools (registered by RPC or a worker's hello) in Redis, so replicas sharing it
 * share them. The operator's tools (tenant "": the config file's, those imported from MCP servers)
 * are each replica's own and never go through Redis.
 */
export interface RegistryReplica {
  /** Loads the stored tools into `registry`, then publishes its changes and applies the others'. */
  attach(registry: ToolRegistry): Promise<void>;
  close(): Promise<void>;
}

/** Options of {@link createRegistryReplica}. */
export interface RegistryReplicaOptions extends SubscriberWatchOptions {
  readonly prefix?: string;
  readonly logger?: Logger;
  /** On a Cluster, longest wait for the publishing master to answer an announcement (see createOrderedPublisher). @default 1000 */
  readonly publishStallMs?: number;
}

interface Announcement {
  readonly origin: string;
  readonly type: RegistryChange['type'];
  readonly tenant: string;
  readonly specs?: readonly string[];
  readonly name?: string;
}

/** Whether a tenant's tools go through Redis: not the operator's (tenant ""), each replica's own. */
const shared = (tenant: string) => tenant !== '';

const encodeSpec = (spec: ToolSpec) => Buffer.from(toBinary(ToolSpecSchema, spec)).toString('base64');
const decodeSpec = (text: string) => fromBinary(ToolSpecSchema, Buffer.from(text, 'base64'));

/**
 * Replicates a registry through Redis: `client` stores the tools (a hash per tenant) and publishes
 * each change; a subscription on connections from `connectSubscriber` (ones that queue while down)
 * hears the other replicas', and moves when it stops hearing its probes (see createWatchedSubscriber).
 * An announcement is taken as "these tools of this tenant changed": the replica reads them again
 * from the tenant's hash and registers each stored spec, or removes the tool when it is gone, so
 * announcements delivered late or out of order (a PUBLISH that stalled on a Cluster master) cannot
 * bring back a removed tool or an older spec; a removal whose tool is stored again (registered
 * again before the read) is applied, then the stored spec. When that read fails, a warning is
 * logged and the announcement is applied as it says, which one out of order can still get wrong
 * until the tool is announced again. On every reconnection, and every move of the subscription,
 * the stored tools are loaded again, so a replica that missed announcements catches up (a removal
 * it missed is not seen until that tool is announced again). Tenant "" is neither published nor applied: a
 * `dispatch:tools:{}` hash, or an announcement for it, left by an older version that shared the
 * operator's tools is ignored.
 */
export function createRegistryReplica(client: RedisClient, connectSubscriber: () => RedisClient, options: RegistryReplicaOptions = {}): RegistryReplica {
  const keys = registryKeys(options.prefix);
  const publisher = createOrderedPublisher(client, { stallMs: options.publishStallMs });
  const origin = randomUUID();
  const { logger, probeIntervalMs, maxMissedProbes, deafNodeAvoidMs } = options;
  const subscriber = createWatchedSubscriber({ name: 'registry replica', connect: connectSubscriber, publisher, logger, probeIntervalMs, maxMissedProbes, deafNodeAvoidMs, prefix: options.prefix });
  let registry: ToolRegistry | undefined;

  /**
   * Applies changes of one tenant, in one go, in order with the tenant's others (their schemas
   * compile in the compiler's thread); resolves once applied or refused.
   */
  async function apply(...changes: RegistryChange[]): Promise<void> {
    await registry?.applyRemoteAsync(changes).catch((error: Error) => logger?.warn('a tool from another replica could not be registered here', { tenant: changes[0]?.tenant, error: error.message }));
  }

  async function loadAll(): Promise<void> {
    const tenants = await client.smembers(keys.tenants);
    for (const tenant of tenants.filter(shared)) {
      const stored = await client.hgetall(keys.tools(tenant));
      for (const text of Object.values(stored)) await apply({ type: 'register', tenant, specs: [decodeSpec(text)] });
    }
  }

  async function publish(change: RegistryChange): Promise<void> {
    if (!shared(change.tenant)) return;
    const announcement: Announcement =
      change.type === 'register'
        ? { origin, type: 'register', tenant: change.tenant, specs: change.specs.map(encodeSpec) }
        : { origin, type: 'remove', tenant: change.tenant, name: change.name };
    if (change.type === 'register') {
      await client.hset(keys.tools(change.tenant), Object.fromEntries(change.specs.map((s, i) => [s.name, announcement.specs![i]!])));
      await client.sadd(keys.tenants, change.tenant);
    } else await client.hdel(keys.tools(change.tenant), change.name);
    // Same fields as ever: replicas of the previous version apply them as they say. Through one
    // node on a Cluster, so that for them a removal does not overtake its registration.
    await publisher.publish(keys.channel, JSON.stringify(announcement));
  }

  // The newest re-read of each tool (`tenant \n name`), while it is in flight. A tenant's hash is
  // on one node and reads over one connection are answered in order, but on a Cluster a read
  // redirected during a failover is sent again and may be answered after a later one: so only the
  // newest re-read of a tool applies it.
  const newest = new Map<string, number>();
  let reads = 0;

  // Applies what the tenant's hash holds now for the tools `change` names (see the function's doc).
  async function refresh(change: RegistryChange): Promise<void> {
    const { tenant } = change;
    const names = change.type === 'remove' ? [change.name] : change.specs.map((spec) => spec.name);
    if (names.length === 0) return;
    const read = ++reads;
    for (const name of names) newest.set(`${tenant}\n${name}`, read);
    // True once, for the newest re-read of `name`, which then applies it.
    const claim = (name: string) => newest.get(`${tenant}\n${name}`) === read && newest.delete(`${tenant}\n${name}`);
    let stored: (string | null)[];
    try {
      stored = await client.hmget(keys.tools(tenant), ...names);
    } catch (error) {
      logger?.warn('could not read changed tools from redis; applying the announcement as it says', { tenant, error: (error as Error).message });
      if (change.type === 'remove') {
        if (claim(change.name)) void apply(change);
      } else {
        const specs = change.specs.filter((spec) => claim(spec.name));
        if (specs.length > 0) void apply({ type: 'register', tenant, specs });
      }
      return;
    }
    const mine = names.map((name, i) => ({ name, text: stored[i] ?? null })).filter(({ name }) => claim(name));
    for (const { name, text } of mine) {
      // A removal whose tool is stored again was followed by a registration: both are applied, in
      // one go, as on the replica that made them (the tool registered again gets a new breaker).
      const removal: RegistryChange[] = text === null || change.type === 'remove' ? [{ type: 'remove', tenant, name }] : [];
      void apply(...removal, ...(text !== null ? [{ type: 'register', tenant, specs: [decodeSpec(text)] } as const] : []));
    }
  }

  function onMessage(channel: string, message: string): void {
    if (channel !== keys.channel) return;
    let change: RegistryChange;
    try {
      const a = JSON.parse(message) as Announcement;
      if (a.origin === origin || !shared(a.tenant)) return;
      if (a.type === 'remove' && a.name !== undefined) change = { type: 'remove', tenant: a.tenant, name: a.name };
      else if (a.type === 'register' && a.specs) change = { type: 'register', tenant: a.tenant, specs: a.specs.map(decodeSpec) };
      else return;
    } catch {
      return;
    }
    void refresh(change).catch((error: Error) => logger?.warn('a tool changed on another replica could not be applied here', { tenant: change.tenant, error: error.message }));
  }

  const reload = () =>
    void loadAll().catch((error: Error) => logger?.warn('could not load the shared tools from redis', { error: error.message }));

  return {
    async attach(target) {
      registry = target;
      subscriber.onMessage(onMessage);
      subscriber.onMoved(reload);
      void subscriber.subscribe(keys.channel).catch((error: Error) => logger?.warn('could not subscribe to registry changes', { error: error.message }));
      // One change at a time, for replicas that apply announcements as they say (the previous
      // version, or a failed re-read): a removal's fewer writes would otherwise let its
      // announcement overtake the registration's (on a Cluster the writes go to different nodes).
      // A change's own promise is returned, for RemoveTool to wait for (and answer its failure).
      let sharing = Promise.resolve();
      target.onChange((change) => {
        const shared = sharing.then(() => publish(change));
        sharing = shared.catch((error: Error) => logger?.error('a registry change could not be shared through redis', { type: change.type, tenant: change.tenant, error: error.message }));
        return shared;
      });
      client.on('ready', reload);
      if (client.status === 'ready') await loadAll().catch((error: Error) => logger?.warn('could not load the shared tools from redis', { error: error.message }));
    },
    async close() {
      client.off('ready', reload);
      await subscriber.close();
    },
  };
}
