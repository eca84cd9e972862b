import type { Plugin, PluginContext } from '../plugin';

/** The shared store: in-memory unless a Redis URL is given (the Redis store lands with issue 3). */
export async function storePlugin(ctx: PluginContext): Promise<Plugin> {
  if (ctx.options.redisUrl) throw new Error('--redis is not supported by this build yet');
  return { name: 'store' };
}
