import type { Logger } from '../log';
import type { RegistryChange, ToolRegistry } from './tool-registry';

/** Told of a change another replica made, once {@link ToolRegistry.applyRemote} has applied it here. */
export type RemoteChangeListener = (change: RegistryChange) => void;

/** A registry that tells of the other replicas' changes it applies (see {@link withRemoteChanges}). */
export interface RemoteChanges {
  onRemoteChange(listener: RemoteChangeListener): void;
}

/**
 * `registry`, whose applyRemote then tells the listeners added by {@link onRemoteChange} of each
 * change it applied (not when it threw; not a change of the operator's tools, tenant "", which it
 * ignores). The registry's own listeners (onChange) hear its local changes only: they share them
 * (Redis), which a change from another replica needs no more. What a local change does here beyond
 * sharing it (a removed tool's breaker forgotten) listens here too. A listener's failure is logged.
 */
export function withRemoteChanges(registry: ToolRegistry, logger: Logger): ToolRegistry & RemoteChanges {
  const listeners: RemoteChangeListener[] = [];
  return {
    ...registry,
    applyRemote(change) {
      registry.applyRemote(change);
      if (change.tenant === '') return;
      for (const listener of listeners) {
        try {
          listener(change);
        } catch (error) {
          logger.warn("a listener of another replica's registry change failed", { type: change.type, tenant: change.tenant, error: (error as Error).message });
        }
      }
    },
    onRemoteChange(listener) {
      listeners.push(listener);
    },
  };
}

/** Adds `listener` to a registry made by {@link withRemoteChanges}; false (nothing added) for any other. */
export function onRemoteChange(registry: ToolRegistry, listener: RemoteChangeListener): boolean {
  const source = registry as Partial<RemoteChanges>;
  if (typeof source.onRemoteChange !== 'function') return false;
  source.onRemoteChange(listener);
  return true;
}
