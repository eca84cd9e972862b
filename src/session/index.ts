export { createScratchDirs } from './scratch-dirs';
export type { ScratchDirs, ScratchHold } from './scratch-dirs';
export { DEFAULT_MAX_SCRATCH_DIRS, DEFAULT_SCRATCH_TTL_MS, resolveScratchDirsOptions } from './scratch-options';
export type { ResolvedScratchDirsOptions, ScratchDirsOptions } from './scratch-options';
export { hideScratchPaths, SCRATCH_DIR_NAME, SCRATCH_ROOT_NAME, withoutScratchPaths } from './scratch-paths';
