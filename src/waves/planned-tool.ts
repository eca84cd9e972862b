import type { PipelineDeps, TurnContext } from '../pipeline';
import type { ResolvedTool } from '../registry';
import type { WaveToolInfo } from './plan-waves';

/**
 * A call's tool as the planner sees it: safe only when every tool the call may run on is, with
 * those tools (its own first, then its fallbacks) for its resource keys.
 */
export interface PlannedTool extends WaveToolInfo {
  readonly tools: readonly ResolvedTool[];
}

/**
 * Plans a call for every tool it may end on: its own, then its `fallback_tool`, that tool's, and
 * so on, as the pipeline follows them (an offered, registered tool not tried before), so a call
 * that may fall back, at any depth, to a tool that is not concurrency-safe runs alone, and one
 * that may fall back to a tool with a resource key is kept apart from the calls on that resource.
 */
export function plannedTool(deps: PipelineDeps, turn: TurnContext, name: string): PlannedTool | undefined {
  const offered = (toolName: string) => !turn.offeredTools || turn.offeredTools.has(toolName);
  const tool = offered(name) ? deps.registry.lookup(turn.tenant, name) : undefined;
  if (!tool) return undefined;
  const tools = [tool];
  for (let next = tool.spec.fallbackTool; next !== '' && offered(next) && !tools.some((t) => t.name === next); ) {
    const fallback = deps.registry.lookup(turn.tenant, next);
    if (!fallback) break;
    tools.push(fallback);
    next = fallback.spec.fallbackTool;
  }
  return { concurrencySafe: tools.every((t) => t.spec.concurrencySafe), resourceKey: tool.spec.resourceKey, tools };
}
