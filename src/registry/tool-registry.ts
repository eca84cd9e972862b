import { equals } from '@bufbuild/protobuf';
import { ToolSpecSchema, type ToolSpec } from '../../gen/dispatch/v1/tool_pb';
import type { ValidateFunction } from 'ajv';
import { createLogger } from '../log';
import { createCompileBudget } from './compile-budget';
import { createDestinationPolicy } from './destination-policy';
import { deniedDestination, operatorToolMessage, skipRedactionMessage, tenantBuiltinRefusal, tenantMcpMessage } from './refusals';
import { MAX_PATTERNS_PER_TENANT, patternsOwned, type LeaseOptions } from './pattern-pool';
import { resolveTool, type ResolvedTool } from './resolved-tool';
import { CompilerBusyError, type CompiledSchema, type SchemaCompiler, type WorkerCode } from './schema-compiler';
import { RegistryError, type ChangeListener, type RegistryChange, type RemovedListener, type ToolRegistry, type ToolRegistryOptions } from './registry-api';
import { createTenantQueue } from './tenant-queue';
import { remoteOverReporter } from './remote-over';
import { schemaBytesExcess, schemaBytesWith, toolCountExcess } from './tenant-totals';
import { checkSpec, fromMcp, keptDespite } from './validate-spec';
import { specSizeProblem } from './spec-bounds';
import { pointerNameProblem } from './pointer-names';

export { RegistryError } from './registry-api';
export type { ChangeListener, RegistryChange, RemovedListener, ToolRegistry, ToolRegistryOptions } from './registry-api';
export { operatorToolMessage, skipRedactionMessage } from './refusals';

/** What a spec's tool holds while a registration is only checked (see compileAll's `collect`): never installed. */
const UNCOMPILED = { schema: {}, validate: (() => false) as unknown as ValidateFunction };

/**
 * Schemas this small (most tools') compile on the event loop in a few ms, as before the worker
 * thread: a worker's tools are then callable as soon as its hello is read, not after a round
 * trip to the compiler's thread (80-300 ms when it starts), which calls sent right after the hello
 * lost (UNKNOWN_TOOL).
 */
const SMALL_SCHEMA_BYTES = 4 * 1024;

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
   * A schema's code from the worker thread is taken from `codes` (compiled here when absent); with
   * `collect`, nothing is compiled or charged: the schema texts to compile are listed there, after
   * every check (the tools returned are never to be installed).
   */
  function compileAll(specs: readonly ToolSpec[], tenant: string, replace: boolean, local: boolean, codes?: ReadonlyMap<string, WorkerCode>, collect?: string[]): ResolvedTool[] {
    const compiled: ResolvedTool[] = [];
    const own = byTenant.get(tenant);
    const keep = replace && !(local && tenant !== '' && patternsOwned(tenant) > MAX_PATTERNS_PER_TENANT);
    const kept = specs.map((spec) => (keep ? heldAsIs(own, spec) : undefined));
    const replaced = replace ? specs.map((spec, i) => (kept[i] ? undefined : own?.get(spec.name))).filter((tool) => tool !== undefined) : [];
    const spent = local && tenant !== '' ? budget.excess(tenant, schemaBytesWith(specs.filter((_, i) => kept[i] === undefined), undefined)) : undefined;
    if (spent) throw new RegistryError('limit', spent.message, spent.retryAfterMs);
    const lease = { replacing: replaced.map((tool) => releases.get(tool)).filter((r) => r !== undefined), perTenantBound: local };
    try {
      for (const [index, spec] of specs.entries()) compiled.push(compileOne(spec, index, tenant, replace, local, compiled, lease, kept[index], codes, collect));
    } catch (error) {
      release(compiled.filter((tool, i) => tool !== kept[i]));
      throw error;
    }
    return compiled;
  }

  /** Compiles one spec, or checks it and returns `held`; `local` registrations of a tenant may not take an operator's tool name. */
  function compileOne(spec: ToolSpec, index: number, tenant: string, replace: boolean, local: boolean, before: readonly ResolvedTool[], lease: LeaseOptions, held?: ResolvedTool, codes?: ReadonlyMap<string, WorkerCode>, collect?: string[]): ResolvedTool {
    const operators = tenant === '' || !local ? undefined : byTenant.get('');
    const where = `tools[${index}]`;
    // Another replica's tool (read from Redis at start, or registered by an older version) is kept
    // past a field's bound or a newer rule, logged: refused, it vanished on every upgraded replica
    // and RemoveTool could not reach it. A registration here is refused (admit, checkSpec).
    const problem = checkSpec(spec, executorKinds(), local);
    if (problem) throw new RegistryError('invalid', `${where}: ${problem}`);
    const kept = local ? undefined : keptDespite(spec);
    if (kept !== undefined) logger.warn(kept.message, { tenant, tool: spec.name, problem: kept.problem });
    const unnamed = local && fromMcp([spec]) ? pointerNameProblem(spec) : undefined;
    if (unnamed !== undefined) logger.warn('an MCP tool is kept though a pointer of it names no property its schema declares (its schema is taken as its server wrote it)', { tenant, tool: spec.name, problem: unnamed });
    const denied = tenant === '' ? undefined : deniedDestination(spec, httpPolicy);
    if (denied) throw new RegistryError('invalid', `${where} ("${spec.name}"): ${denied}`);
    if (spec.skipRedaction && tenant !== '' && !options.allowTenantSkipRedaction) throw new RegistryError('denied', skipRedactionMessage(where, spec.name));
    if (spec.executor.case === 'mcp' && tenant !== '' && local && !options.allowTenantMcp) throw new RegistryError('denied', tenantMcpMessage(where, spec.name));
    const builtin = tenant !== '' && local ? tenantBuiltinRefusal(where, spec) : undefined;
    if (builtin !== undefined) throw new RegistryError('denied', builtin);
    if (before.some((tool) => tool.name === spec.name)) throw new RegistryError('invalid', `${where}: duplicate tool name "${spec.name}" in one request`);
    if (operators?.has(spec.name)) throw new RegistryError('exists', operatorToolMessage(where, spec.name));
    if (!replace && tenantTools(tenant).has(spec.name)) {
      throw new RegistryError('exists', `${where}: tool "${spec.name}" is already registered (set replace: true in RegisterToolsRequest, or dispatchctl tools register --replace, to overwrite it)`);
    }
    if (held !== undefined) return held;
    if (collect) {
      collect.push(spec.inputSchema);
      return resolveTool(spec, tenant, UNCOMPILED);
    }
    if (tenant !== '') budget.charge(tenant, schemaBytesWith([spec], undefined), !local);
    let compiled: CompiledSchema;
    try {
      compiled = compiler.compile(spec.inputSchema, tenant, lease, codes?.get(spec.inputSchema), local && !fromMcp([spec]));
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

  /**
   * Compiles each distinct text in the worker thread, one after the other (a registration takes one
   * place in its queue); a small one is left out, to be compiled on the event loop at install.
   */
  async function generateAll(texts: readonly string[], tenant: string, local: boolean, hereUpTo = SMALL_SCHEMA_BYTES, checkMistakes = local): Promise<Map<string, WorkerCode>> {
    const codes = new Map<string, WorkerCode>();
    for (const text of texts) {
      if (codes.has(text) || Buffer.byteLength(text) <= hereUpTo) continue;
      try {
        codes.set(text, await compiler.generate(text, tenant, { perTenantBound: local }, checkMistakes));
      } catch (error) {
        if (error instanceof CompilerBusyError) throw new RegistryError('limit', error.message, error.retryAfterMs);
        throw error;
      }
    }
    return codes;
  }
  const inOrder = createTenantQueue();

  /** The registration's refusals made before anything is compiled. */
  const admit = (specs: readonly ToolSpec[], tenant: string, maxTools: number | undefined) => {
    // A field past its own bound first: INVALID_ARGUMENT, which no retry mends (the totals' RESOURCE_EXHAUSTED is retried).
    specs.forEach((spec, i) => {
      if (specSizeProblem(spec) !== undefined) throw new RegistryError('invalid', `tools[${i}]: ${checkSpec(spec, executorKinds())}`);
    });
    if (maxTools !== undefined) refuseOver(toolCountExcess(specs, byTenant.get(tenant), tenant, maxTools));
    checkBytes(specs, tenant);
  };
  function registerWith(specs: readonly ToolSpec[], { tenant, replace = false, maxTools }: { tenant: string; replace?: boolean; maxTools?: number }, codes?: ReadonlyMap<string, WorkerCode>): ResolvedTool[] {
    admit(specs, tenant, maxTools);
    const tools = compileAll(specs, tenant, replace, true, codes);
    install(tools, tenant);
    notify({ type: 'register', tenant, specs });
    return tools;
  }
  /** The specs of another replica's registration not held here as they are (each Redis reconnection loads every stored tool). */
  const changedSpecs = (tenant: string, specs: readonly ToolSpec[]) => {
    const own = byTenant.get(tenant);
    return specs.filter((spec) => heldAsIs(own, spec) === undefined);
  };
  function applyWith(change: RegistryChange, codes?: ReadonlyMap<string, WorkerCode>): void {
    if (change.type === 'remove') {
      if (drop(change.tenant, change.name)) removed(change.tenant, change.name);
    } else {
      const changed = changedSpecs(change.tenant, change.specs);
      if (changed.length > 0) install(compileAll(changed, change.tenant, true, false, codes), change.tenant);
    }
    reportOver(change.tenant);
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
    register: (specs, options) => registerWith(specs, options),
    registerAsync(specs, options) {
      return inOrder(options.tenant, async () => {
        const texts: string[] = [];
        admit(specs, options.tenant, options.maxTools);
        compileAll(specs, options.tenant, options.replace ?? false, true, undefined, texts);
        const codes = await generateAll(texts, options.tenant, true, options.compileHereUpTo, !fromMcp(specs));
        return options.wanted?.() === false ? [] : registerWith(specs, options, codes);
      });
    },
    lookup(tenant, name) {
      return byTenant.get('')?.get(name) ?? byTenant.get(tenant)?.get(name);
    },
    list(tenant, own = false) {
      const shared = own ? new Map<string, ResolvedTool>() : (byTenant.get('') ?? new Map<string, ResolvedTool>());
      const held = tenant === '' && !own ? [] : [...(byTenant.get(tenant)?.values() ?? [])].filter((t) => !shared.has(t.name));
      return [...shared.values(), ...held].sort((a, b) => a.name.localeCompare(b.name));
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
      if (change.tenant !== '') applyWith(change);
    },
    async applyRemoteAsync(changes) {
      // Array.isArray does not narrow a readonly array.
      const list: readonly RegistryChange[] = Array.isArray(changes) ? (changes as readonly RegistryChange[]) : [changes as RegistryChange];
      const tenant = list[0]?.tenant ?? '';
      if (tenant === '') return;
      if (list.some((change) => change.tenant !== tenant)) throw new Error('applyRemoteAsync: every change must be of one tenant');
      await inOrder(tenant, async () => {
        // What the changes compile: specs not held as they are, or whose tool a change of them removes.
        const removedHere = new Set(list.map((change) => (change.type === 'remove' ? change.name : undefined)));
        const own = byTenant.get(tenant);
        const texts = list.flatMap((change) => (change.type === 'register' ? change.specs.filter((spec) => removedHere.has(spec.name) || heldAsIs(own, spec) === undefined).map((spec) => spec.inputSchema) : []));
        const codes = await generateAll(texts, tenant, false);
        // Each applied, one refused or not; in one go, as on the replica that made them.
        let failure: unknown;
        for (const change of list) {
          try {
            applyWith(change, codes);
          } catch (error) {
            failure ??= error;
          }
        }
        if (failure !== undefined) throw failure;
      });
    },
    close: () => compiler.close(),
  };
}
