import type { Plugin, PluginContext } from '../plugin';

/** Authentication and TLS (issue 10). */
export async function authPlugin(_ctx: PluginContext): Promise<Plugin> {
  return { name: 'auth' };
}
