import { createParallelDispatcher } from '../../waves';
import type { Plugin, PluginContext } from '../plugin';

/** Parallel dispatch in waves (issue 5): `DISPATCH_MODE_PARALLEL` turns of two calls or more. */
export async function parallelPlugin(_ctx: PluginContext): Promise<Plugin> {
  return { name: 'parallel', parallel: createParallelDispatcher() };
}
