import { lstatSync, mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A temp dir laid out as the kubelet mounts a Secret, updated the way the kubelet updates it. */
export interface SecretMount {
  readonly dir: string;
  /** The path of a key's file (`tls.crt`, `tokens.yaml`). */
  path(key: string): string;
  /** Writes a new generation of the Secret and swaps `..data` to it in one rename. */
  publish(files: Readonly<Record<string, string | Buffer>>): void;
  remove(): void;
}

/**
 * Creates the mount: each key is a symlink `key -> ..data/key`, `..data` a symlink to the
 * current generation's directory, so a new generation replaces every file at once.
 */
export function createSecretMount(prefix = 'dispatch-secret-'): SecretMount {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  let generation = 0;
  return {
    dir,
    path: (key) => join(dir, key),
    publish(files) {
      generation += 1;
      const name = `..gen${generation}`;
      mkdirSync(join(dir, name));
      for (const [key, content] of Object.entries(files)) writeFileSync(join(dir, name, key), content);
      symlinkSync(name, join(dir, '..data_tmp'));
      renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
      for (const key of Object.keys(files)) if (lstatSync(join(dir, key), { throwIfNoEntry: false }) === undefined) symlinkSync(join('..data', key), join(dir, key));
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
