export { createPipeline } from './create-pipeline';
export type { PipelineOptions } from './create-pipeline';
