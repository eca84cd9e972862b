import type { Plugin, PluginContext } from '../plugin';

/** Loop detection, breakers, hooks and policies, recovery and middleware (issue 4). */
export async function guardsPlugin(_ctx: PluginContext): Promise<Plugin> {
  return { name: 'guards' };
}
