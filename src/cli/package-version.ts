import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../server/project-root';

/**
 * The package's version, which `--version` prints (dispatchctl's and dispatchd's): read from
 * package.json at the package root when asked, from source or dist/ alike (a JSON import would
 * copy package.json into dist/ and load it at every start).
 */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(join(projectRoot(__dirname), 'package.json'), 'utf8')) as { version: string }).version;
}
