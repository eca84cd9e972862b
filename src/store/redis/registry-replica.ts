import { randomUUID } from 'node:crypto';
import { fromBinary, toBinary } from '@bufbuild/protobuf';
import { ToolSpecSchema, type ToolSpec } from '../../../gen/dispatch/v1/tool_pb';
import type { Logger } from '../../log';
import type { RegistryChange, ToolRegistry } from '../../registry';
import type { RedisClient } from './connect';
import { createOrderedPublisher } from './ordered-publisher';
import { registryKeys } from './session-keys';

/** Keeps the tools registered by RPC in Redis, so replicas sharing it share them. */
export interface RegistryReplica {
  /** Loads the stored tools into `registry`, then publishes its changes and applies the others'. */
  attach(registry: ToolRegistry): Promise<void>;
  close(): Promise<void>;
}

/** Options of {@link createRegistryReplica}. */
export interface RegistryReplicaOptions {
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

const encodeSpec = (spec: ToolSpec) => Buffer.from(toBinary(ToolSpecSchema, spec)).toString('base64');
const decodeSpec = (text: string) => fromBinary(ToolSpecSchema, Buffer.from(text, 'base64'));

/**
 * Replicates a registry through Redis: `client` stores the tools (a hash per tenant) and publishes
 * each change; `subscriber` (a connection that queues while down) hears the other replicas'. On
 * every reconnection the stored tools are loaded again, so a replica that missed announcements
 * catches up (removals made meanwhile are not seen until the next announcement).
 */
export function createRegistryReplica(client: RedisClient, subscriber: RedisClient, options: RegistryReplicaOptions = {}): RegistryReplica {
  const keys = registryKeys(options.prefix);
  const publisher = createOrderedPublisher(client, { stallMs: options.publishStallMs });
  const origin = randomUUID();
  const logger = options.logger;
  let registry: ToolRegistry | undefined;

  function apply(change: RegistryChange): void {
    try {
      registry?.applyRemote(change);
    } catch (error) {
      logger?.warn('a tool from another replica could not be registered here', { tenant: change.tenant, error: (error as Error).message });
    }
  }

  async function loadAll(): Promise<void> {
    const tenants = await client.smembers(keys.tenants);
    for (const tenant of tenants) {
      const stored = await client.hgetall(keys.tools(tenant));
      for (const text of Object.values(stored)) apply({ type: 'register', tenant, specs: [decodeSpec(text)] });
    }
  }

  async function publish(change: RegistryChange): Promise<void> {
    const announcement: Announcement =
      change.type === 'register'
        ? { origin, type: 'register', tenant: change.tenant, specs: change.specs.map(encodeSpec) }
        : { origin, type: 'remove', tenant: change.tenant, name: change.name };
    if (change.type === 'register') {
      await client.hset(keys.tools(change.tenant), Object.fromEntries(change.specs.map((s, i) => [s.name, announcement.specs![i]!])));
      await client.sadd(keys.tenants, change.tenant);
    } else await client.hdel(keys.tools(change.tenant), change.name);
    // Through one node on a Cluster, so that a removal does not overtake its registration.
    await publisher.publish(keys.channel, JSON.stringify(announcement));
  }

  function onMessage(channel: string, message: string): void {
    if (channel !== keys.channel) return;
    let a: Announcement;
    try {
      a = JSON.parse(message) as Announcement;
    } catch {
      return;
    }
    if (a.origin === origin) return;
    if (a.type === 'remove' && a.name !== undefined) apply({ type: 'remove', tenant: a.tenant, name: a.name });
    else if (a.type === 'register' && a.specs) apply({ type: 'register', tenant: a.tenant, specs: a.specs.map(decodeSpec) });
  }

  const reload = () =>
    void loadAll().catch((error: Error) => logger?.warn('could not load the shared tools from redis', { error: error.message }));

  return {
    async attach(target) {
      registry = target;
      subscriber.on('message', onMessage);
      // A cluster client refuses SUBSCRIBE until it knows its nodes; ioredis resubscribes later.
      const subscribe = () => void subscriber.subscribe(keys.channel).catch((error: Error) => logger?.warn('could not subscribe to registry changes', { error: error.message }));
      if (subscriber.status === 'ready') subscribe();
      else subscriber.once('ready', subscribe);
      // One change at a time: a removal's fewer writes would otherwise let its announcement
      // overtake the registration's (on a Cluster the writes go to different nodes).
      let sharing = Promise.resolve();
      target.onChange((change) => {
        sharing = sharing.then(() => publish(change)).catch((error: Error) => logger?.error('a registry change could not be shared through redis', { type: change.type, tenant: change.tenant, error: error.message }));
      });
      client.on('ready', reload);
      if (client.status === 'ready') await loadAll().catch((error: Error) => logger?.warn('could not load the shared tools from redis', { error: error.message }));
    },
    async close() {
      client.off('ready', reload);
      subscriber.off('message', onMessage);
      subscriber.disconnect();
    },
  };
}
