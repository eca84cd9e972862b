import { fromBinary, toBinary } from '@bufbuild/protobuf';
import { defineWorkerSpecScript, type RedisClient as Redis } from '../../store/redis';
import { ToolSpecSchema, type ToolSpec } from '../../../gen/dispatch/v1/tool_pb';
import type { Logger } from '../../log';
import type { ToolRegistry } from '../../registry';

/**
 * Shares the specs of worker-hosted tools, so every replica can dispatch them (with the executors
 * plugin alone too, where no registry replica shares the tenants' tools).
 */
export interface SpecSync {
  publish(tenant: string, specs: readonly ToolSpec[]): Promise<void>;
  /**
   * Forgets a tool being removed (RemoveTool): its spec is deleted, so that no replica registers it
   * again from the hash (at start, when its subscription moves), and when one was shared the
   * replicas are told to remove it, in one step (forget-worker-spec.lua). Resolves once Redis has
   * done both; rejects when it refused.
   */
  remove(tenant: string, name: string): Promise<void>;
  /** Registers every spec shared so far (at start, and when the subscription moved). */
  load(): Promise<void>;
  /**
   * Tells the other replicas that a worker hosting `tool` connected here (their breakers of it
   * half-open, see BreakerGate.halfOpen). Resolves once published.
   */
  announceHosted(tenant: string, tool: string): Promise<void>;
  /**
   * Tells the other replicas that workers here host `hosted` still, once this replica subscribed
   * again: a call may have found no one listening here meanwhile, so only their breakers that
   * calls finding no host opened half-open (`again`). A tool whose announceHosted failed since the
   * last time is announced as a worker that connected instead. Resolves once all are published.
   */
  announceAgain(hosted: readonly { readonly tenant: string; readonly tool: string }[]): Promise<void>;
  /** Applies a message from the specs channel. */
  receive(text: string): void;
}

/** Told that another replica hosts `tool`: a worker for it connected there, or (`again`) hosts it still. */
export type HostedListener = (tenant: string, tool: string, again: boolean) => void;

/** The hash holding every worker tool's spec (field `tenant \n name`), and the channel announcing them and their removals. */
export const SPECS_KEY = 'dispatch:worker:specs';

const encode = (spec: ToolSpec) => Buffer.from(toBinary(ToolSpecSchema, spec)).toString('base64');
const decode = (text: string) => fromBinary(ToolSpecSchema, Buffer.from(text, 'base64'));

/**
 * A message on the specs channel: specs registered, (`removed`) a tool removed, or (`hosted`) a
 * worker hosting a tool connected to the sender (`again`: hosts it still, told once the sender
 * subscribed again). A replica of an older version ignores `hosted`; one before `again` takes it
 * for a worker that connected.
 */
interface SpecsMessage {
  readonly from: string;
  readonly tenant: string;
  readonly specs?: string[];
  readonly removed?: string;
  readonly hosted?: string;
  readonly again?: true;
}

/** Creates the spec sharing of replica `replicaId` into `registry`; `onHosted` is told of another replica's announceHosted. */
export function createSpecSync(redis: Redis, replicaId: string, registry: ToolRegistry, logger: Logger, onHosted: HostedListener = () => undefined): SpecSync {
  defineWorkerSpecScript(redis);
  /** Applies another replica's worker tools, in order with the tenant's other changes; resolves once applied or refused. */
  const apply = async (tenant: string, specs: ToolSpec[]): Promise<void> => {
    const mine = specs.filter((spec) => {
      const existing = registry.lookup(tenant, spec.name);
      return !existing || existing.tenant !== tenant || existing.spec.executor.case === 'worker';
    });
    if (mine.length === 0) return;
    await registry.applyRemoteAsync({ type: 'register', tenant, specs: mine }).catch((error: Error) => logger.warn('a worker tool shared by another replica was refused', { tenant, error: error.message }));
  };
  // A tenant's tool of another executor by that name (with the executors plugin alone, a tool
  // registered by RPC here) is not the one removed.
  const forget = (tenant: string, name: string) => {
    const existing = registry.lookup(tenant, name);
    if (existing?.tenant === tenant && existing.spec.executor.case !== 'worker') return;
    registry.applyRemoteAsync({ type: 'remove', tenant, name }).catch((error: Error) => logger.warn('a worker tool removed by another replica could not be removed here', { tenant, error: error.message }));
  };
  // Tools whose announcement failed since the last announceAgain (`tenant \n tool`): cleared by it.
  let unheard = new Set<string>();
  const announce = (tenant: string, tool: string, again: boolean) =>
    redis.publish(SPECS_KEY, JSON.stringify({ from: replicaId, tenant, hosted: tool, ...(again ? { again } : {}) } satisfies SpecsMessage));
  const announceNew = async (tenant: string, tool: string) => {
    await announce(tenant, tool, false).catch((error: unknown) => {
      unheard.add(`${tenant}\n${tool}`);
      throw error;
    });
  };
  return {
    async publish(tenant, specs) {
      const encoded = specs.map(encode);
      const batch = redis.pipeline();
      specs.forEach((spec, i) => batch.hset(SPECS_KEY, `${tenant}\n${spec.name}`, encoded[i]!));
      batch.publish(SPECS_KEY, JSON.stringify({ from: replicaId, tenant, specs: encoded } satisfies SpecsMessage));
      await batch.exec();
    },
    announceHosted: announceNew,
    async announceAgain(hosted) {
      const lost = unheard;
      unheard = new Set();
      await Promise.all(hosted.map(({ tenant, tool }) => (lost.has(`${tenant}\n${tool}`) ? announceNew(tenant, tool) : announce(tenant, tool, true))));
    },
    async remove(tenant, name) {
      await redis.dispatchForgetWorkerSpec(SPECS_KEY, `${tenant}\n${name}`, JSON.stringify({ from: replicaId, tenant, removed: name } satisfies SpecsMessage));
    },
    async load() {
      const byTenant = new Map<string, ToolSpec[]>();
      for (const [field, text] of Object.entries(await redis.hgetall(SPECS_KEY))) {
        const tenant = field.slice(0, field.lastIndexOf('\n'));
        try {
          byTenant.set(tenant, [...(byTenant.get(tenant) ?? []), decode(text)]);
        } catch {
          logger.warn('an unreadable worker tool spec in Redis was skipped', { field });
        }
      }
      for (const [tenant, specs] of byTenant) await apply(tenant, specs);
    },
    receive(text) {
      try {
        const message = JSON.parse(text) as SpecsMessage;
        if (message.from === replicaId) return;
        if (typeof message.hosted === 'string') onHosted(message.tenant, message.hosted, message.again === true);
        else if (message.removed !== undefined) forget(message.tenant, message.removed);
        else if (message.specs) void apply(message.tenant, message.specs.map(decode));
      } catch (error) {
        logger.warn('an unreadable worker tool announcement was skipped', { error: (error as Error).message });
      }
    },
  };
}
