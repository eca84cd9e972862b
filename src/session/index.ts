export { createScratchDirs } from './scratch-dirs';
export type { ScratchDirs } from './scratch-dirs';
