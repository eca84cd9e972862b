import type { Plugin, PluginContext } from '../plugin';

/** Events, Subscribe, traces, metrics and GetToolStats (issue 6). */
export async function observabilityPlugin(_ctx: PluginContext): Promise<Plugin> {
  return { name: 'observability' };
}
