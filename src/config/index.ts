export { ConfigError } from './config-error';
export { loadConfig, parseConfig, parseTokens } from './load-config';
export type { DispatchConfig, TokenEntry } from './load-config';
export { toolFromYaml } from './tool-yaml';
