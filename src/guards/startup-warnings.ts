import { Effect, type ToolSpec } from '../../gen/dispatch/v1/tool_pb';
import type { DispatchConfig } from '../config';
import { suggestKey } from '../config/unknown-key';
import { globAny, globMatch } from './glob';
import { isRecord, parseMatch } from './parse-rule';

/** A start-up warning: its log message and fields. */
export interface StartupWarning {
  readonly message: string;
  readonly fields: Record<string, unknown>;
}

/** The policy kinds whose `match:` is checked against the config file's tools (they decide or count calls). */
const CHECKED_KINDS = ['decide', 'budget', 'concurrency', 'rate'] as const;

/** The separators a tool name is commonly spelt with; a glob spelt with another one is offered. */
const SEPARATORS = ['_', '-', '.'];

/** Never thrown: the policies were checked by parsePolicies before. */
const unreachable = (): never => {
  throw new Error('policies are checked before their warnings');
};

/**
 * A glob like `pattern` that matches one of `names`: the nearest name when `pattern` has no
 * wildcard, else `pattern` lower-cased and/or with its separators (- _ .) spelt another way.
 */
function meantPattern(pattern: string, names: readonly string[]): string | undefined {
  if (!/[*?]/.test(pattern)) return suggestKey(pattern, names);
  for (const lower of [pattern, pattern.toLowerCase()]) {
    for (const separator of SEPARATORS) {
      const respelt = lower.replace(/[-_.]/g, separator);
      if (respelt !== pattern && names.some((name) => globMatch(respelt, name))) return respelt;
    }
  }
  return undefined;
}

/**
 * The `decide`, `budget`, `concurrency` and `rate` entries of `policies:` whose `match:` fits no
 * tool of the config file: most likely a misspelt name or glob (`delete-*` for `delete_db`), which
 * would otherwise leave the tool unguarded without a word. Only warnings: a tenant's tools, and
 * an MCP server's, are registered after start-up and may be what the entry is for. Nothing is
 * said when the file defines no tools (they all come later then).
 */
export function policyMatchWarnings(policies: readonly unknown[], tools: readonly ToolSpec[]): StartupWarning[] {
  const names = tools.map((tool) => tool.name);
  if (names.length === 0) return [];
  const warnings: StartupWarning[] = [];
  policies.forEach((entry, index) => {
    if (!isRecord(entry)) return;
    const kind = CHECKED_KINDS.find((k) => entry[k] !== undefined);
    if (kind === undefined) return;
    const match = parseMatch(entry.match, unreachable);
    if (names.some((name) => globAny(match, name))) return;
    const meant = match.map((pattern) => meantPattern(pattern, names)).find((m) => m !== undefined);
    const label = typeof entry.name === 'string' ? `policies[${index}] (${entry.name})` : `policies[${index}]`;
    const hint = meant !== undefined ? ` (did you mean ${JSON.stringify(meant)}?)` : '';
    warnings.push({
      message: `${label}: match ${JSON.stringify(match.length === 1 ? match[0] : match)} fits no tool of the config file${hint}; the ${kind} entry applies only to tools registered later (by a tenant or an MCP server) that it fits`,
      fields: { policy: index, kind, match },
    });
  });
  return warnings;
}

/**
 * The read-only tools of the config file whose `fallback_tool` is one of its side-effecting
 * tools: that fallback is never taken (see applyCorrection, which refuses it at call time
 * whatever registered either tool), so the pair is most likely a mistake in one of the effects.
 */
export function fallbackEffectWarnings(tools: readonly ToolSpec[]): StartupWarning[] {
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const warnings: StartupWarning[] = [];
  for (const tool of tools) {
    const fallback = tool.fallbackTool === '' ? undefined : byName.get(tool.fallbackTool);
    if (tool.effect !== Effect.READ_ONLY || !fallback || fallback.effect === Effect.READ_ONLY) continue;
    warnings.push({
      message: `tool "${tool.name}" is read-only and its fallback_tool "${fallback.name}" is side-effecting: a read-only call never falls back to a tool that changes things, so this fallback is never taken (make "${fallback.name}" read_only if it changes nothing, or name a read-only fallback)`,
      fields: { tool: tool.name, fallbackTool: fallback.name },
    });
  }
  return warnings;
}

/** Every start-up warning of the config file's `policies:` and `tools:`. */
export function startupWarnings(config: Pick<DispatchConfig, 'policies' | 'tools'>): StartupWarning[] {
  return [...policyMatchWarnings(config.policies, config.tools), ...fallbackEffectWarnings(config.tools)];
}
