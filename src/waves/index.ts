export { planWaves } from './plan-waves';
export type { Wave, WaveToolInfo, WaveToolLookup, PlannedCall, ResourceKeyOf, LoopOpsOf } from './plan-waves';
export { resourceKeyIn, resourceKeyOf } from './resource-key';
export { createParallelDispatcher } from './dispatch-parallel';
export { DEFAULT_MAX_CONCURRENCY, resolveWaveOptions } from './wave-options';
export type { WaveOptions, ResolvedWaveOptions } from './wave-options';
export { ResourceLocks } from './resource-locks';
