export { ConfigError } from './config-error';
export { loadConfig, parseConfig, parseTokens } from './load-config';
export type { AuthConfig, DispatchConfig, MtlsTenantField, TokenEntry } from './load-config';
export { parseRedactionConfig } from './redaction-config';
export type { RedactionConfig } from './redaction-config';
export { toolFromYaml } from './tool-yaml';
export { yamlValue } from './yaml-value';
export { parseToolsFile } from './tools-file';
