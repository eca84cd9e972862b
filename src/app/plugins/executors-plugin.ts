import type { Plugin, PluginContext } from '../plugin';

/** Worker streams and MCP servers (issue 7). */
export async function executorsPlugin(_ctx: PluginContext): Promise<Plugin> {
  return { name: 'executors' };
}
