export { createPipeline } from './create-pipeline';
export type { PipelineOptions } from './create-pipeline';
export { buildApp } from './build-app';
export type { App } from './build-app';
export { CLOSE_BUDGET_MS, FIRST_CLOSE_MS } from './close-app';
export type { Plugin, PluginContext, PluginFactory } from './plugin';
export { PLUGINS } from './plugins';
