// Leaf modules: none of these loads gRPC, OpenTelemetry or ioredis.
import { ListenFailure, listenProblem } from '../app/listen-failure';
import { TlsFileError } from '../auth/tls-file-error';
import { ConfigError } from '../config/config-error';
import { RedisConfigError } from '../store/redis/misconfiguration';
import { renamed, type DaemonOptions } from './dispatchd-options';
import { errorText, type StartupProblem } from './startup-failure';

/** A YAML syntax error's place, as ConfigError's path gives it. */
const LINE_AND_COLUMN = /^line (\d+), column (\d+)$/;

/** A refused config file (or tokens file): `bad config: FILE: PATH: PROBLEM`, its file, path or line and column. */
export function configProblem(error: ConfigError): StartupProblem {
  const at = LINE_AND_COLUMN.exec(error.path);
  const where = at ? { line: Number(at[1]), column: Number(at[2]) } : error.path === '' ? {} : { path: error.path };
  return { code: 'invalid_config', text: `bad config: ${error.message}`, error: error.problem, fields: { file: error.file, ...where } };
}

/** A port that could not be bound, naming the flag or variable that gave it (`setBy`, or `the default`). */
export function listenFailed(failure: { flag: string; variable: string; address: string }, setBy: string | undefined, cause: Error): StartupProblem {
  const errno = /\b(E[A-Z]{3,})\b/.exec(cause.message)?.[1];
  return {
    code: 'listen_failed',
    text: `cannot start: ${listenProblem(failure, setBy ?? 'the default', cause)}`,
    error: cause.message,
    fields: { setting: setBy ?? failure.flag, address: failure.address, ...(errno === undefined ? {} : { errno }) },
  };
}

/** Where the Redis URL came from: a flag or variable, else the config file's `redis.url`. */
export interface RedisUrlSource {
  readonly setting?: string;
  readonly file: string;
}

/**
 * Why the app could not be built: the config file (a policy, an MCP server), a port (the metrics
 * endpoint), a TLS file, Redis refusing the configuration or a bad URL, or anything else.
 */
export function appProblem(error: unknown, options: Pick<DaemonOptions, 'sources'>, redis: RedisUrlSource): StartupProblem {
  if (error instanceof ConfigError) return configProblem(error);
  if (error instanceof ListenFailure) return listenFailed(error, options.sources[error.flag.slice(2)], error.cause as Error);
  // A message naming a flag names the variable instead when one gave the value (renamed).
  const text = errorText(renamed(error, options.sources));
  if (error instanceof TlsFileError) {
    const setting = error.flag === undefined ? undefined : (options.sources[error.flag.slice(2)] ?? error.flag);
    return { code: 'tls_files', text: `cannot start: ${text}`, error: text, fields: { ...(setting === undefined ? {} : { setting }), ...(error.file === undefined ? {} : { file: error.file }) } };
  }
  const from = redis.setting !== undefined ? { setting: redis.setting } : { file: redis.file, path: 'redis.url' };
  if (error instanceof RedisConfigError) return { code: 'redis_refused', text: `cannot start: ${text}`, error: text, fields: from };
  if (text.startsWith('bad Redis URL')) {
    return { code: 'invalid_redis_url', text: `cannot start: ${text} (from ${redis.setting ?? `${redis.file}: redis.url`})`, error: text, fields: from };
  }
  return { code: 'start_failed', text: `cannot start: ${text}`, error: text };
}
