import type { ToolSpec } from '../../gen/dispatch/v1/tool_pb';
import { ConfigError } from './config-error';
import { parseTools, TOP_LEVEL } from './load-config';
import { unknownKeyProblem } from './unknown-key';
import { yamlValue } from './yaml-value';

/**
 * The tools of a file `dispatchctl tools register` sends (RegisterTools): the config file's
 * `tools:` list, checked as the config file's is. Any other section is refused, naming it: the RPC
 * takes tools alone, and a `policies:` or `limits:` beside them was dropped without a word, so a
 * user took a block rule for active. `file` names the file in errors.
 */
export function parseToolsFile(text: string, file: string): ToolSpec[] {
  const root = (yamlValue(text, file) ?? {}) as unknown;
  if (typeof root !== 'object' || Array.isArray(root)) throw new ConfigError(file, '', 'the file must be a YAML mapping with a tools: list');
  for (const key of Object.keys(root as object)) {
    if (key === 'tools') continue;
    if (!TOP_LEVEL.includes(key)) throw new ConfigError(file, key, unknownKeyProblem(key, ['tools'], 'a tools file holds a tools: list alone'));
    throw new ConfigError(file, key, `only tools: can be registered at runtime; ${key}: is set in dispatchd's config file (--config), read when dispatchd starts: remove it from this file`);
  }
  return parseTools(file, (root as Record<string, unknown>).tools);
}
