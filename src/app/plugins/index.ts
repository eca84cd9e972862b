import type { PluginFactory } from '../plugin';
import { authPlugin } from './auth-plugin';
import { executorsPlugin } from './executors-plugin';
import { guardsPlugin } from './guards-plugin';
import { observabilityPlugin } from './observability-plugin';
import { parallelPlugin } from './parallel-plugin';
import { storePlugin } from './store-plugin';

/** Every plugin, in assembly order; middleware is applied in this order too (first outermost). */
export const PLUGINS: readonly PluginFactory[] = [storePlugin, observabilityPlugin, guardsPlugin, executorsPlugin, parallelPlugin, authPlugin];
