/** A configuration problem, naming the file, the path inside it and what is wrong. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    readonly file: string,
    readonly path: string,
    readonly problem: string,
  ) {
    super(`${file}: ${path === '' ? '' : `${path}: `}${problem}`);
  }
}
