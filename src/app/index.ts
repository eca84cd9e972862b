export { createPipeline } from './create-pipeline';
export type { PipelineOptions } from './create-pipeline';
export { buildApp } from './build-app';
export type { App } from './build-app';
export type { Plugin, PluginContext, PluginFactory } from './plugin';
export { PLUGINS } from './plugins';
