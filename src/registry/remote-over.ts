import type { Logger } from '../log';
import { MAX_PATTERNS_PER_TENANT, patternsOwned } from './pattern-pool';
import type { ResolvedTool } from './resolved-tool';
import { schemaBytesWith } from './tenant-totals';

/**
 * Reports a tenant that another replica's tools left over its totals here (schema bytes, patterns),
 * once until it is under them again (ToolRegistry.applyRemote).
 */
export function remoteOverReporter(tools: (tenant: string) => ReadonlyMap<string, ResolvedTool> | undefined, maxSchemaBytesPerTenant: number | undefined, logger: Logger): (tenant: string) => void {
  // Tenants another replica's tools left over a total, reported once until they are under again.
  const over = new Set<string>();
  return (tenant) => {
    const schemaBytes = schemaBytesWith([], tools(tenant));
    const patterns = patternsOwned(tenant);
    if (schemaBytes <= (maxSchemaBytesPerTenant ?? Infinity) && patterns <= MAX_PATTERNS_PER_TENANT) over.delete(tenant);
    else if (!over.has(tenant)) {
      over.add(tenant);
      logger.warn("a tenant's tools from other replicas are over its limits here; they are kept (the registering replica decided), and registrations here that leave it over are refused", {
        tenant, schemaBytes, maxSchemaBytesPerTenant, patterns, maxPatternsPerTenant: MAX_PATTERNS_PER_TENANT,
      });
    }
  };
}
