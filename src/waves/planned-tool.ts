import { MAX_RECOVERY_ATTEMPTS } from '../options';
import type { PipelineDeps, TurnContext } from '../pipeline';
import type { ResolvedTool } from '../registry';
import type { WaveToolInfo } from './plan-waves';

/**
 * A call's tool as the planner sees it: safe only when every tool the call may run on is, with
 * those tools (its own first, then its fallbacks) for its loop operations, and their distinct
 * resource keys (JSON pointers) for its resource keys.
 */
export interface PlannedTool extends WaveToolInfo {
  readonly tools: readonly ResolvedTool[];
  /** The distinct, non-empty `resource_key` pointers of `tools`. */
  readonly pointers: readonly string[];
}

/**
 * Plans a call for every tool it may end on: its own, then its `fallback_tool`, that tool's, and
 * so on, as the pipeline follows them (an offered, registered tool not tried before), so a call
 * that may fall back to a tool that is not concurrency-safe runs alone, and one that may fall back
 * to a tool with a resource key is kept apart from the calls on that resource. The walk stops at
 * MAX_RECOVERY_ATTEMPTS tools: a call makes at most that many attempts, each on one tool, so a
 * tool deeper in the chain never runs (and a tenant's chain of a thousand tools costs no more).
 */
export function plannedTool(deps: PipelineDeps, turn: TurnContext, name: string): PlannedTool | undefined {
  const offered = (toolName: string) => !turn.offeredTools || turn.offeredTools.has(toolName);
  const tool = offered(name) ? deps.registry.lookup(turn.tenant, name) : undefined;
  if (!tool) return undefined;
  const tools = [tool];
  const visited = new Set([tool.name]);
  for (let next = tool.spec.fallbackTool; tools.length < MAX_RECOVERY_ATTEMPTS && next !== '' && offered(next) && !visited.has(next); ) {
    const fallback = deps.registry.lookup(turn.tenant, next);
    if (!fallback) break;
    tools.push(fallback);
    visited.add(fallback.name);
    next = fallback.spec.fallbackTool;
  }
  const pointers = [...new Set(tools.map((t) => t.spec.resourceKey).filter((pointer) => pointer !== ''))];
  return { concurrencySafe: tools.every((t) => t.spec.concurrencySafe), resourceKey: tool.spec.resourceKey, tools, pointers };
}

/** plannedTool remembered by name for one turn: the calls of a turn naming one tool share it. */
export function plannedTools(deps: PipelineDeps, turn: TurnContext): (name: string) => PlannedTool | undefined {
  const known = new Map<string, PlannedTool | undefined>();
  return (name) => {
    if (known.has(name)) return known.get(name);
    const planned = plannedTool(deps, turn, name);
    known.set(name, planned);
    return planned;
  };
}
