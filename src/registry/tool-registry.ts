import { equals } from '@bufbuild/protobuf';
import { ToolSpecSchema, type ToolSpec } from '../../gen/dispatch/v1/tool_pb';
import { createLogger, type Logger } from '../log';
import { createCompileBudget } from './compile-budget';
import { createDestinationPolicy, type DestinationPolicy } from './destination-policy';
import { deniedDestination, operatorToolMessage, skipRedactionMessage } from './refusals';
import { MAX_PATTERNS_PER_TENANT, patternsOwned, type LeaseOptions } from './pattern-pool';
import { resolveTool, type ResolvedTool } from './resolved-tool';
import type { CompiledSchema, SchemaCompiler } from './schema-compiler';
import { remoteOverReporter } from './remote-over';
import { schemaBytesExcess, schemaBytesWith, toolCountExcess } from './tenant-totals';
import { checkSpec } from './validate-spec';

/** Why a registration was refused: a bad spec, a name that exists without `replace`, or the tenant's tool limit. */
export class RegistryError extends Error {
  override readonly name = 'RegistryError';
  constructor(
    readonly code: 'invalid' | 'exists' | 'limit' | 'denied',
    message: string,
  ) {
    super(message);
  }
}

/** A change to the registry, so that a shared store can carry it to other replicas. */
export type RegistryChange =
  | { readonly type: 'register'; readonly tenant: string; readonly specs: readonly ToolSpec[] }
  | { readonly type: 'remove'; readonly tenant: string; readonly name: string };

/**
 * Told of a change to the registry. One that shares changes (writes them to Redis) returns the
 * promise of that write, which {@link ToolRegistry.removeShared} awaits; where nobody waits, each
 * listener reports its own failures.
 */
export type ChangeListener = (change: RegistryChange) => void | Promise<void>;

/** Told once a removed tool is gone here, whichever replica removed it (see {@link ToolRegistry.onRemoved}). */
export type RemovedListener = (tenant: string, name: string) => void;

/**
 * The tools this server can dispatch, per tenant. The operator's tools (tenant "": the config
 * file's and those imported from MCP servers) are seen by every tenant and win over a tenant's tool
 * of the same name, which no tenant can register but one may hold from before the name became the
 * operator's (an MCP server listing it later).
 */
export interface ToolRegistry {
  /**
   * Validates and compiles every spec first, then registers all or none. With `maxTools`, refuses
   * (code `limit`) before anything else when the tenant would own more tools than that; a spec
   * replacing one of its tools does not count again. A tenant's spec named as an operator's tool
   * is refused (code `exists`), with `replace` too. With `replace`, a spec equal to the tool held by
   * its name (a worker's hello on each reconnection) is checked and that tool kept, not compiled again.
   */
  register(specs: readonly ToolSpec[], options: { tenant: string; replace?: boolean; maxTools?: number }): ResolvedTool[];
  /** The operator's tool of that name, else the tenant's own. */
  lookup(tenant: string, name: string): ResolvedTool | undefined;
  list(tenant: string): ResolvedTool[];
  /** Removes a tool here; listeners are told after, and nobody waits for what they share. */
  remove(tenant: string, name: string): boolean;
  /**
   * RemoveTool: tells the listeners first and waits for every one, then removes the tool here, so
   * that the removal is shared (in Redis, announced) when this resolves. When a listener fails,
   * rejects with its error and leaves the tool registered here: the removal can be asked again.
   * A tool registered again while the listeners worked (a worker's hello) is kept.
   */
  removeShared(tenant: string, name: string): Promise<boolean>;
  /** Called on every local change (before it, for {@link removeShared}); a replicated registry listens here. */
  onChange(listener: ChangeListener): void;
  /**
   * Called once a removal made here has happened: after {@link remove}, and after
   * {@link removeShared} once shared (the tool dropped, or one registered again meanwhile kept), never
   * for one that failed; and for a removal from another replica once {@link applyRemote} has dropped
   * the tool here. A listener's throw is logged.
   */
  onRemoved(listener: RemovedListener): void;
  /**
   * Applies a change made on another replica, without notifying listeners. A change of the
   * operator's tools (tenant "") is ignored: each replica has its own (DESIGN section 11). The
   * tenant's totals (tools, schema bytes, patterns) are not checked: the registering replica
   * decided, so every replica holds the same tools. A tenant left over its schema bytes or patterns
   * is logged (warn, once until it is under again); a registration here that leaves it over is
   * refused. The process's pattern bound still refuses a tool here (thrown: this replica lacks it).
   * Its compiled schemas count against the tenant's compile budget here, never refused by it.
   */
  applyRemote(change: RegistryChange): void;
}

export { operatorToolMessage, skipRedactionMessage } from './refusals';

/** Options of {@link createToolRegistry}. */
export interface ToolRegistryOptions {
  /**
   * Where the HTTP tools of tenants may point; a URL whose literal address or host it denies is
   * refused at registration (the config file's tools, tenant "", are not checked).
   * @default the built-in rules alone
   */
  readonly httpPolicy?: DestinationPolicy;
  /**
   * Whether a tenant's tool may declare `skip_redaction` (the config file's tools, tenant "", always
   * may); refused PERMISSION_DENIED otherwise. @default false
   */
  readonly allowTenantSkipRedaction?: boolean;
  /**
   * Bytes of schema text a tenant's tools may hold together (registered here or by a worker's
   * hello); refused `limit` before any compile. Not checked on another replica's tools (see
   * {@link ToolRegistry.applyRemote}). @default no bound
   */
  readonly maxSchemaBytesPerTenant?: number;
  /**
   * Bytes of input schema a tenant may have compiled here per minute (see compile-budget.ts): a
   * registration here (RPC, a worker's hello) whose new or changed schemas would pass what is left
   * is refused `limit` before any compile; a spec held as it is costs nothing. Another replica's
   * tools are applied whatever is left, and counted. @default no bound
   */
  readonly maxSchemaBytesCompiledPerMinute?: number;
  /** Where a tenant left over its totals by another replica's tools is reported. @default createLogger() */
  readonly logger?: Logger;
}

/** Creates a registry compiling schemas with `compiler`, accepting the given executor kinds. */
export function createToolRegistry(
  compiler: SchemaCompiler,
  executorKinds: () => ReadonlySet<string>,
  options: ToolRegistryOptions = {},
): ToolRegistry {
  const httpPolicy = options.httpPolicy ?? createDestinationPolicy();
  const byTenant = new Map<string, Map<string, ResolvedTool>>();
  const listeners: ChangeListener[] = [];
  const removedListeners: RemovedListener[] = [];
  const logger = options.logger ?? createLogger();
  const reportOver = remoteOverReporter((tenant) => byTenant.get(tenant), options.maxSchemaBytesPerTenant, logger);
  const budget = createCompileBudget(options.maxSchemaBytesCompiledPerMinute, logger);
  const tenantTools = (tenant: string) => {
    let tools = byTenant.get(tenant);
    if (!tools) byTenant.set(tenant, (tools = new Map()));
    return tools;
  };

  const refuseOver = (excess: string | undefined) => {
    if (excess !== undefined) throw new RegistryError('limit', excess);
  };
  const checkBytes = (specs: readonly ToolSpec[], tenant: string) => {
    if (tenant !== '' && options.maxSchemaBytesPerTenant !== undefined) refuseOver(schemaBytesExcess(specs, byTenant.get(tenant), tenant, options.maxSchemaBytesPerTenant));
  };
  // What gives back each registered tool's schema patterns (counted for its tenant) once it goes.
  const releases = new WeakMap<ResolvedTool, () => void>();
  const release = (tools: Iterable<ResolvedTool>) => {
    for (const tool of tools) releases.get(tool)?.();
  };
  /** Removes a tool here, giving back its patterns. */
  const drop = (tenant: string, name: string, only?: ResolvedTool): boolean => {
    const tools = byTenant.get(tenant);
    const tool = tools?.get(name);
    if (tools === undefined || tool === undefined || (only !== undefined && tool !== only)) return false;
    tools.delete(name);
    release([tool]);
    return true;
  };

  // Tools whose removal is being shared (removeShared), with how many: one registered again meanwhile is another object, which it keeps.
  const removing = new Map<ResolvedTool, number>();
  /** The tool the tenant holds by `spec`'s name when its spec is protobuf-equal, so is right as it is (resolveTool reads the spec and tenant alone). */
  const heldAsIs = (own: ReadonlyMap<string, ResolvedTool> | undefined, spec: ToolSpec): ResolvedTool | undefined => {
    const held = own?.get(spec.name);
    return held !== undefined && !removing.has(held) && equals(ToolSpecSchema, held.spec, spec) ? held : undefined;
  };

  /**
   * Compiles `specs` for `tenant` (all or none: on a failure, those compiled give their patterns
   * back). The patterns only the tools they replace hold do not count for the tenant; the tenant's
   * pattern bound applies to `local` registrations only. With `replace`, a tool held as it is
   * ({@link heldAsIs}: a worker declares its tools again on every reconnection) is kept, not
   * compiled again (0.4-1 s of event loop per 256 KiB of schema); not while the tenant is over its
   * pattern bound (another replica's tools), where a local registration compiles, refused as before.
   */
  function compileAll(specs: readonly ToolSpec[], tenant: string, replace: boolean, local: boolean): ResolvedTool[] {
    const compiled: ResolvedTool[] = [];
    const own = byTenant.get(tenant);
    const keep = replace && !(local && tenant !== '' && patternsOwned(tenant) > MAX_PATTERNS_PER_TENANT);
    const kept = specs.map((spec) => (keep ? heldAsIs(own, spec) : undefined));
    const replaced = replace ? specs.map((spec, i) => (kept[i] ? undefined : own?.get(spec.name))).filter((tool) => tool !== undefined) : [];
    if (local && tenant !== '') refuseOver(budget.excess(tenant, schemaBytesWith(specs.filter((_, i) => kept[i] === undefined), undefined)));
    const lease = { replacing: replaced.map((tool) => releases.get(tool)).filter((r) => r !== undefined), perTenantBound: local };
    try {
      for (const [index, spec] of specs.entries()) compiled.push(compileOne(spec, index, tenant, replace, local, compiled, lease, kept[index]));
    } catch (error) {
      release(compiled.filter((tool, i) => tool !== kept[i]));
      throw error;
    }
    return compiled;
  }

  /** Compiles one spec, or checks it and returns `held`; `local` registrations of a tenant may not take an operator's tool name. */
  function compileOne(spec: ToolSpec, index: number, tenant: string, replace: boolean, local: boolean, before: readonly ResolvedTool[], lease: LeaseOptions, held?: ResolvedTool): ResolvedTool {
    const operators = tenant === '' || !local ? undefined : byTenant.get('');
    const where = `tools[${index}]`;
    const problem = checkSpec(spec, executorKinds());
    if (problem) throw new RegistryError('invalid', `${where}: ${problem}`);
    const denied = tenant === '' ? undefined : deniedDestination(spec, httpPolicy);
    if (denied) throw new RegistryError('invalid', `${where} ("${spec.name}"): ${denied}`);
    if (spec.skipRedaction && tenant !== '' && !options.allowTenantSkipRedaction) throw new RegistryError('denied', skipRedactionMessage(where, spec.name));
    if (before.some((tool) => tool.name === spec.name)) throw new RegistryError('invalid', `${where}: duplicate tool name "${spec.name}" in one request`);
    if (operators?.has(spec.name)) throw new RegistryError('exists', operatorToolMessage(where, spec.name));
    if (!replace && tenantTools(tenant).has(spec.name)) {
      throw new RegistryError('exists', `${where}: tool "${spec.name}" is already registered (set replace to overwrite it)`);
    }
    if (held !== undefined) return held;
    if (tenant !== '') budget.charge(tenant, schemaBytesWith([spec], undefined), !local);
    let compiled: CompiledSchema;
    try {
      compiled = compiler.compile(spec.inputSchema, tenant, lease);
    } catch (error) {
      throw new RegistryError('invalid', `${where} ("${spec.name}"): ${(error as Error).message}`);
    }
    if (compiled.unknownFormats.length > 0) logger.warn('a tool schema names formats nothing checks: they are annotations', { tenant, tool: spec.name.slice(0, 256), formats: compiled.unknownFormats.slice(0, 5) });
    const tool = resolveTool(spec, tenant, compiled);
    releases.set(tool, compiled.release);
    return tool;
  }

  function install(tools: readonly ResolvedTool[], tenant: string): void {
    const map = tenantTools(tenant);
    for (const tool of tools) {
      const old = map.get(tool.name);
      map.set(tool.name, tool);
      if (old !== undefined && old !== tool) release([old]);
    }
  }

  const notify = (change: RegistryChange) => {
    for (const listener of listeners) void listener(change)?.catch(() => undefined);
  };
  const removed = (tenant: string, name: string) => {
    for (const listener of removedListeners) {
      try {
        listener(tenant, name);
      } catch (error) {
        logger.warn('a listener of a removed tool failed', { tenant, tool: name.slice(0, 256), error: (error as Error).message });
      }
    }
  };

  return {
    register(specs, { tenant, replace = false, maxTools }) {
      if (maxTools !== undefined) refuseOver(toolCountExcess(specs, byTenant.get(tenant), tenant, maxTools));
      checkBytes(specs, tenant);
      const tools = compileAll(specs, tenant, replace, true);
      install(tools, tenant);
      notify({ type: 'register', tenant, specs });
      return tools;
    },
    lookup(tenant, name) {
      return byTenant.get('')?.get(name) ?? byTenant.get(tenant)?.get(name);
    },
    list(tenant) {
      const shared = byTenant.get('') ?? new Map<string, ResolvedTool>();
      const own = tenant === '' ? [] : [...(byTenant.get(tenant)?.values() ?? [])].filter((t) => !shared.has(t.name));
      return [...shared.values(), ...own].sort((a, b) => a.name.localeCompare(b.name));
    },
    remove(tenant, name) {
      if (!drop(tenant, name)) return false;
      notify({ type: 'remove', tenant, name });
      removed(tenant, name);
      return true;
    },
    async removeShared(tenant, name) {
      const tool = byTenant.get(tenant)?.get(name);
      if (tool === undefined) return false;
      const change: RegistryChange = { type: 'remove', tenant, name };
      removing.set(tool, (removing.get(tool) ?? 0) + 1);
      const shared = await Promise.allSettled(listeners.map(async (listener) => listener(change)));
      const left = removing.get(tool)! - 1;
      if (left > 0) removing.set(tool, left);
      else removing.delete(tool);
      const failed = shared.find((outcome) => outcome.status === 'rejected');
      if (failed) throw failed.reason;
      drop(tenant, name, tool);
      removed(tenant, name);
      return true;
    },
    onChange(listener) {
      listeners.push(listener);
    },
    onRemoved(listener) {
      removedListeners.push(listener);
    },
    applyRemote(change) {
      if (change.tenant === '') return;
      if (change.type === 'remove') {
        if (drop(change.tenant, change.name)) removed(change.tenant, change.name);
      } else {
        // A tool held here already, spec for spec, is not compiled again (each Redis reconnection loads every stored tool).
        const own = byTenant.get(change.tenant);
        const changed = change.specs.filter((spec) => heldAsIs(own, spec) === undefined);
        if (changed.length > 0) install(compileAll(changed, change.tenant, true, false), change.tenant);
      }
      reportOver(change.tenant);
    },
  };
}
