import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The package root (where `proto/` and `examples/` live), from source or compiled code alike. */
export function projectRoot(from: string = __dirname): string {
  let dir = from;
  while (!existsSync(join(dir, 'proto', 'dispatch'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`cannot find the dispatch package root above ${from}`);
    dir = parent;
  }
  return dir;
}
