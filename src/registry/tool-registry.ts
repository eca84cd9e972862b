import type { ToolSpec } from '../../gen/dispatch/v1/tool_pb';
import { resolveTool, type ResolvedTool } from './resolved-tool';
import type { SchemaCompiler } from './schema-compiler';
import { checkSpec } from './validate-spec';

/** Why a registration was refused: a bad spec, or a name that exists without `replace`. */
export class RegistryError extends Error {
  override readonly name = 'RegistryError';
  constructor(
    readonly code: 'invalid' | 'exists',
    message: string,
  ) {
    super(message);
  }
}

/** A change to the registry, so that a shared store can carry it to other replicas. */
export type RegistryChange =
  | { readonly type: 'register'; readonly tenant: string; readonly specs: readonly ToolSpec[] }
  | { readonly type: 'remove'; readonly tenant: string; readonly name: string };

/** The tools this server can dispatch, per tenant; config-file tools (tenant "") are seen by all. */
export interface ToolRegistry {
  /** Validates and compiles every spec first, then registers all or none. */
  register(specs: readonly ToolSpec[], options: { tenant: string; replace?: boolean }): ResolvedTool[];
  lookup(tenant: string, name: string): ResolvedTool | undefined;
  list(tenant: string): ResolvedTool[];
  remove(tenant: string, name: string): boolean;
  /** Called after every local change; a replicated registry listens here. */
  onChange(listener: (change: RegistryChange) => void): void;
  /** Applies a change made on another replica, without notifying listeners. */
  applyRemote(change: RegistryChange): void;
}

/** Creates a registry compiling schemas with `compiler`, accepting the given executor kinds. */
export function createToolRegistry(
  compiler: SchemaCompiler,
  executorKinds: () => ReadonlySet<string>,
): ToolRegistry {
  const byTenant = new Map<string, Map<string, ResolvedTool>>();
  const listeners: ((change: RegistryChange) => void)[] = [];
  const tenantTools = (tenant: string) => {
    let tools = byTenant.get(tenant);
    if (!tools) byTenant.set(tenant, (tools = new Map()));
    return tools;
  };

  function compileAll(specs: readonly ToolSpec[], tenant: string, replace: boolean): ResolvedTool[] {
    const seen = new Set<string>();
    return specs.map((spec, index) => {
      const where = `tools[${index}]`;
      const problem = checkSpec(spec, executorKinds());
      if (problem) throw new RegistryError('invalid', `${where}: ${problem}`);
      if (seen.has(spec.name)) throw new RegistryError('invalid', `${where}: duplicate tool name "${spec.name}" in one request`);
      seen.add(spec.name);
      if (!replace && tenantTools(tenant).has(spec.name)) {
        throw new RegistryError('exists', `${where}: tool "${spec.name}" is already registered (set replace to overwrite it)`);
      }
      try {
        return resolveTool(spec, tenant, compiler.compile(spec.inputSchema));
      } catch (error) {
        throw new RegistryError('invalid', `${where} ("${spec.name}"): ${(error as Error).message}`);
      }
    });
  }

  function install(tools: readonly ResolvedTool[], tenant: string): void {
    const map = tenantTools(tenant);
    for (const tool of tools) map.set(tool.name, tool);
  }

  const notify = (change: RegistryChange) => {
    for (const listener of listeners) listener(change);
  };

  return {
    register(specs, { tenant, replace = false }) {
      const tools = compileAll(specs, tenant, replace);
      install(tools, tenant);
      notify({ type: 'register', tenant, specs });
      return tools;
    },
    lookup(tenant, name) {
      return byTenant.get(tenant)?.get(name) ?? (tenant === '' ? undefined : byTenant.get('')?.get(name));
    },
    list(tenant) {
      const own = byTenant.get(tenant) ?? new Map<string, ResolvedTool>();
      const shared = tenant === '' ? [] : [...(byTenant.get('')?.values() ?? [])].filter((t) => !own.has(t.name));
      return [...shared, ...own.values()].sort((a, b) => a.name.localeCompare(b.name));
    },
    remove(tenant, name) {
      const removed = byTenant.get(tenant)?.delete(name) ?? false;
      if (removed) notify({ type: 'remove', tenant, name });
      return removed;
    },
    onChange(listener) {
      listeners.push(listener);
    },
    applyRemote(change) {
      if (change.type === 'remove') byTenant.get(change.tenant)?.delete(change.name);
      else install(compileAll(change.specs, change.tenant, true), change.tenant);
    },
  };
}
