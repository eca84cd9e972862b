import { ConfigError } from './config-error';

/** `${NAME}` (a variable's name as shells write them), `$${` (a `${` written as it is), or a `${` that is neither. */
const REF = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]{0,127})\}|\$\{/g;

/**
 * `value` with each `${NAME}` replaced by the environment's NAME, for the fields that carry
 * secrets or addresses a deployment sets: an HTTP tool's `url` and `headers`, an MCP server's
 * `url`, `headers` and `env`. So a token comes from a Kubernetes Secret (the Helm chart's
 * `extraEnv`, `valueFrom.secretKeyRef`), not the ConfigMap. `$${` is a `${` as written. A name not
 * set, or set empty, is refused naming the field and the variable (a header sent as `Bearer ` would
 * fail every call, and the value is not shown); so is a `${` with no name after it.
 */
export function withEnv(value: string, file: string, path: string, env: NodeJS.ProcessEnv = process.env): string {
  if (!value.includes('${')) return value;
  return value.replace(REF, (match: string, name: string | undefined) => {
    if (match === '$${') return '${';
    if (name === undefined) throw new ConfigError(file, path, 'holds a "${" that names no variable: write ${NAME} for a variable of the environment, or $${ for "${" as it is');
    const found = env[name];
    if (found === undefined || found === '') {
      throw new ConfigError(file, path, `\${${name}} names a variable ${found === undefined ? 'not set' : 'set empty'} in the environment (set it where dispatchd starts; under Kubernetes from a Secret, the chart's extraEnv)`);
    }
    return found;
  });
}

/** A tool's YAML entry with `${NAME}` replaced in its `http.url` and `http.headers` values (see {@link withEnv}). */
export function toolWithEnv(entry: unknown, file: string, path: string, env: NodeJS.ProcessEnv = process.env): unknown {
  if (!isMapping(entry) || !isMapping(entry.http)) return entry;
  const http: Record<string, unknown> = { ...entry.http };
  if (typeof http.url === 'string') http.url = withEnv(http.url, file, `${path}.http.url`, env);
  if (isMapping(http.headers)) {
    const headers: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const [name, value] of Object.entries(http.headers)) headers[name] = typeof value === 'string' ? withEnv(value, file, `${path}.http.headers.${name}`, env) : value;
    http.headers = headers;
  }
  return { ...entry, http };
}

const isMapping = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);
