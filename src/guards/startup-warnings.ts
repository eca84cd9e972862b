import { Effect, type ToolSpec } from '../../gen/dispatch/v1/tool_pb';
import type { DispatchConfig } from '../config';
import { TOOL_DEFAULTS } from '../options';
import { suggestKey } from '../config/unknown-key';
import { globAny, globMatch } from './glob';
import { CHECKED_BEFORE, isRecord, parseMatch } from './parse-rule';
import { policyPointerWarnings, regexGlobWarnings } from './policy-pointer-warnings';
import { shadowedPolicyWarnings } from './shadowed-policies';

/** A start-up warning: its log message and fields. */
export interface StartupWarning {
  readonly message: string;
  readonly fields: Record<string, unknown>;
}

/**
 * The policy kinds whose `match:` is checked against the config file's tools: they decide or count
 * calls, or set a tool's breaker (a misspelt breaker entry left the tool with the default breaker,
 * unsaid). Not `after:`, which only annotates results.
 */
const CHECKED_KINDS = ['decide', 'budget', 'concurrency', 'rate', 'breaker'] as const;

/** The separators a tool name is commonly spelt with; a glob spelt with another one is offered. */
const SEPARATORS = ['_', '-', '.'];

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
 * The `decide`, `budget`, `concurrency`, `rate` and `breaker` entries of `policies:` whose `match:` fits no
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
    const match = parseMatch(entry.match, CHECKED_BEFORE);
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

/**
 * The tools of the config file whose `fallback_tool` names none of its tools: most likely a
 * misspelt name, which would leave the tool without its fallback without a word. Only warnings,
 * as for policyMatchWarnings: a tool registered later (by a tenant or an MCP server) may be meant.
 */
export function fallbackNameWarnings(tools: readonly ToolSpec[]): StartupWarning[] {
  const names = tools.map((tool) => tool.name);
  const warnings: StartupWarning[] = [];
  for (const tool of tools) {
    if (tool.fallbackTool === '' || names.includes(tool.fallbackTool)) continue;
    // Not the tool itself: a fallback naming its own tool is refused at load.
    const meant = suggestKey(tool.fallbackTool, names.filter((name) => name !== tool.name));
    const hint = meant !== undefined ? ` (did you mean ${JSON.stringify(meant)}?)` : '';
    warnings.push({
      message: `tool "${tool.name}": fallback_tool "${tool.fallbackTool}" names no tool of the config file${hint}; the fallback is taken only once a tool of that name is registered (by a tenant or an MCP server)`,
      fields: { tool: tool.name, fallbackTool: tool.fallbackTool },
    });
  }
  return warnings;
}

/** A tool's loop thresholds, as the file spells them, with their defaults (tool-defaults). */
const LOOP_THRESHOLDS = [
  { key: 'warn_threshold', field: 'warnThreshold', byDefault: TOOL_DEFAULTS.loopWarn, off: 'warned of (LOOP_WARNING)' },
  { key: 'stop_threshold', field: 'stopThreshold', byDefault: TOOL_DEFAULTS.loopStop, off: 'stopped (LOOP_DETECTED)' },
  { key: 'failure_warn_threshold', field: 'failureWarnThreshold', byDefault: TOOL_DEFAULTS.failureWarn, off: 'warned of failing the same way' },
  { key: 'failure_block_threshold', field: 'failureBlockThreshold', byDefault: TOOL_DEFAULTS.failureBlock, off: 'refused (LOOP_BLOCKED)' },
] as const;

type LoopThreshold = (typeof LOOP_THRESHOLDS)[number];

/** "a, b or c". */
const either = (items: readonly string[]) => (items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`);

/** The threshold a tool's `loop:` sets (0 is the default), or undefined. */
function ownThreshold(tool: ToolSpec, t: LoopThreshold): number | undefined {
  const value = tool.loop?.[t.field];
  return value === undefined || value === 0 ? undefined : value;
}

/**
 * Loop settings that turn loop detection off without a word (DESIGN section 6). A streak is
 * counted within the session's window, so a threshold above `limits.loop_window` is never reached:
 * the default ones (every tool that does not set its own, including those registered later) or a
 * config-file tool's own. A warning threshold above its stop (or block) threshold never warns: the
 * call is stopped first (one equal to it warns once, on the call before the stop).
 */
export function loopSettingWarnings(tools: readonly ToolSpec[], loopWindow: number): StartupWarning[] {
  const warnings: StartupWarning[] = [];
  const unreached = LOOP_THRESHOLDS.filter((t) => t.byDefault > loopWindow);
  if (unreached.length > 0) {
    const listed = unreached.map((t) => `${t.key} ${t.byDefault}`).join(', ');
    warnings.push({
      message: `limits.loop_window ${loopWindow} is smaller than the default loop ${listed}: a session's window never holds that many repeats of a call, so a repeated call of a tool without its own threshold is never ${either(unreached.map((t) => t.off))}; make loop_window at least ${Math.max(...unreached.map((t) => t.byDefault))}`,
      fields: { loopWindow, thresholds: unreached.map((t) => t.key) },
    });
  }
  for (const tool of tools) {
    for (const t of LOOP_THRESHOLDS) {
      const own = ownThreshold(tool, t);
      if (own === undefined || own <= loopWindow) continue;
      warnings.push({
        message: `tool "${tool.name}": loop.${t.key} ${own} is larger than limits.loop_window ${loopWindow}: a session's window never holds that many repeats of a call, so a repeated call of it is never ${t.off}`,
        fields: { tool: tool.name, threshold: t.key, value: own, loopWindow },
      });
    }
    for (const [warn, stop] of [[LOOP_THRESHOLDS[0], LOOP_THRESHOLDS[1]], [LOOP_THRESHOLDS[2], LOOP_THRESHOLDS[3]]] as const) {
      if (ownThreshold(tool, warn) === undefined && ownThreshold(tool, stop) === undefined) continue;
      const warnAt = ownThreshold(tool, warn) ?? warn.byDefault;
      const stopAt = ownThreshold(tool, stop) ?? stop.byDefault;
      if (warnAt <= stopAt) continue;
      const said = (t: LoopThreshold, value: number) => `${t.key} ${value}${ownThreshold(tool, t) === undefined ? ' (the default)' : ''}`;
      warnings.push({
        message: `tool "${tool.name}": loop.${said(warn, warnAt)} is larger than its ${said(stop, stopAt)}: a repeated call is ${stop.off} before it is ever warned of; make ${warn.key} at most ${stop.key}`,
        fields: { tool: tool.name, threshold: warn.key, value: warnAt, [stop.key]: stopAt },
      });
    }
  }
  return warnings;
}

/** Every start-up warning of the config file's `policies:`, `tools:` and loop settings. */
export function startupWarnings(config: Pick<DispatchConfig, 'policies' | 'tools' | 'limits'>): StartupWarning[] {
  return [...policyMatchWarnings(config.policies, config.tools), ...policyPointerWarnings(config.policies, config.tools), ...regexGlobWarnings(config.policies), ...shadowedPolicyWarnings(config.policies, config.tools), ...fallbackEffectWarnings(config.tools), ...fallbackNameWarnings(config.tools), ...loopSettingWarnings(config.tools, config.limits.loopWindow)];
}
