import { status, type ServiceError } from '@grpc/grpc-js';
import { createPipeline } from '../../src/app';
import { ConfigError, parseConfig, toolFromYaml, yamlValue } from '../../src/config';
import { SILENT_LOGGER } from '../../src/log';
import type { TestDispatch } from '../helpers/servers';

/** The file named in the config-path refusals. */
export const FILE = 'tools.yaml';

/** A config file holding one tool of `fields` (a YAML flow mapping's fields). */
export const toolFile = (fields: string) => `tools:\n  - { ${fields} }\n`;

/**
 * What dispatchd's start says of a config file holding one tool of `fields`, as dispatchd-serve
 * reaches it (parseConfig, then buildApp's createPipeline registering the tools), or 'loaded'.
 */
export function startRefusal(fields: string): string {
  try {
    createPipeline({ config: parseConfig(toolFile(fields), FILE), logger: SILENT_LOGGER });
    return 'loaded';
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
}

/** RegisterTools' answer to the tool of `fields` (the spec dispatchctl tools register would send): `registered`, or the status and its details. */
export async function registerRefusal(d: TestDispatch, fields: string): Promise<string> {
  const parsed = toolFromYaml(yamlValue(`{ ${fields} }`, FILE));
  if (!('spec' in parsed)) throw new Error(`the tool does not parse: ${parsed.path}: ${parsed.problem}`);
  try {
    await d.registry.registerTools({ tools: [parsed.spec], replace: true });
    return 'registered';
  } catch (error) {
    return `${status[(error as ServiceError).code]}: ${(error as ServiceError).details}`;
  }
}

/**
 * Expects the config file's start and RegisterTools to refuse the tool of `fields` alike: the
 * start with `tools.yaml: <refusal>`, the RPC INVALID_ARGUMENT with the same refusal.
 */
export async function expectRefusedAlike(d: TestDispatch, fields: string, refusal: string): Promise<void> {
  expect(startRefusal(fields)).toBe(`${FILE}: ${refusal}`);
  expect(await registerRefusal(d, fields)).toBe(`INVALID_ARGUMENT: ${refusal}`);
}

/** Expects both paths to take the tool of `fields`. */
export async function expectTakenAlike(d: TestDispatch, fields: string): Promise<void> {
  expect(startRefusal(fields)).toBe('loaded');
  expect(await registerRefusal(d, fields)).toBe('registered');
}
