import type { Plugin, PluginContext } from '../plugin';

/** Parallel dispatch in waves (issue 5). */
export async function parallelPlugin(_ctx: PluginContext): Promise<Plugin> {
  return { name: 'parallel' };
}
