export { planWaves } from './plan-waves';
export type { Wave, WaveToolInfo, WaveToolLookup, PlannedCall } from './plan-waves';
export { resourceKeyOf } from './resource-key';
export { createParallelDispatcher } from './dispatch-parallel';
export { DEFAULT_MAX_CONCURRENCY, resolveWaveOptions } from './wave-options';
export type { WaveOptions, ResolvedWaveOptions } from './wave-options';
