export { createSchemaCompiler } from './schema-compiler';
export type { SchemaCompiler } from './schema-compiler';
export { resolveTool } from './resolved-tool';
export type { ResolvedTool, ResolvedRetry, ResolvedLoopPolicy } from './resolved-tool';
export { createToolRegistry, RegistryError } from './tool-registry';
export type { ToolRegistry, RegistryChange } from './tool-registry';
export { checkSpec } from './validate-spec';
