import type { Logger } from '../log';
import type { ResolvedTool, ToolRegistry } from '../registry';

/** A tool and the fallback_tool it names, as one key. */
const pairKey = (tool: ResolvedTool) => `${tool.tenant}\0${tool.name}\0${tool.spec.fallbackTool}`;

/**
 * The tools `tenant` sees (the operator's and its own) whose `fallback_tool` names no tool it
 * sees, by {@link pairKey}: such a call never falls back (applyCorrection finds nothing offered).
 */
function danglingFallbacks(registry: ToolRegistry, tenant: string): Map<string, ResolvedTool> {
  const found = new Map<string, ResolvedTool>();
  for (const tool of registry.list(tenant)) {
    const fallback = tool.spec.fallbackTool;
    if (fallback !== '' && registry.lookup(tenant, fallback) === undefined) found.set(pairKey(tool), tool);
  }
  return found;
}

/**
 * Warns when a tool registered or removed while dispatch runs leaves a `fallback_tool` naming no
 * tool: a tool registered with one that names nothing, or the tool a fallback named removed (by
 * RemoveTool, here or on another replica). The config file's are warned of at start
 * (fallbackNameWarnings); here each tool-and-fallback pair is warned of once when a change makes it
 * name nothing, not per call, and again only after a tool of that name came back and went again.
 * Checked per tenant that changed (an operator's change: the operator's tools and every tenant seen
 * changing), so each change costs one pass over that tenant's tools.
 */
export function watchFallbackNames(registry: ToolRegistry, logger: Logger): void {
  // What was dangling for each tenant at its last check; a tenant not seen yet starts from the operator's.
  const known = new Map<string, ReadonlySet<string>>([['', new Set(danglingFallbacks(registry, '').keys())]]);
  const check = (tenant: string, change: string) => {
    const now = danglingFallbacks(registry, tenant);
    const before = known.get(tenant) ?? known.get('')!;
    for (const [key, tool] of now) {
      if (before.has(key)) continue;
      const owner = tool.tenant === '' ? '' : ` of tenant "${tool.tenant}"`;
      const seenBy = tenant === tool.tenant ? '' : ` tenant "${tenant}" sees`;
      logger.warn(`tool "${tool.name}"${owner}: fallback_tool "${tool.spec.fallbackTool}" names no tool${seenBy} since ${change}; the fallback is taken only once a tool of that name is registered`, {
        tenant,
        tool: tool.name,
        fallbackTool: tool.spec.fallbackTool,
      });
    }
    known.set(tenant, new Set(now.keys()));
  };
  const changed = (tenant: string, change: string) => {
    // A warning is never worth failing the registration it follows (onChange runs inside it).
    try {
      if (tenant !== '') return check(tenant, change);
      check('', change);
      for (const seen of [...known.keys()]) if (seen !== '') check(seen, change);
    } catch (error) {
      logger.warn('could not check the fallback_tool names after a change of tools', { tenant, error: (error as Error).message });
    }
  };
  registry.onChange((change) => {
    // A removal is checked once it has happened (onRemoved), here or on another replica.
    if (change.type === 'register') changed(change.tenant, `tools were registered (${change.specs.map((spec) => JSON.stringify(spec.name)).slice(0, 5).join(', ')}${change.specs.length > 5 ? ', ...' : ''})`);
  });
  registry.onRemoved((tenant, name) => changed(tenant, `tool ${JSON.stringify(name.slice(0, 256))} was removed`));
}
