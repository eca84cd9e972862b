import { parseArgs } from 'node:util';
// Leaf modules, not their packages' indexes: dispatchd parses its options (and answers --help or
// a usage error) before it loads the app, gRPC, OpenTelemetry or ioredis.
import type { TlsFiles } from '../auth';
import { resolveTlsRefreshIntervalMs } from '../auth/tls-refresh-interval';
import { MAX_TIMER_MS } from '../options/limits';
import { parseRedisUrl } from '../store/redis/redis-url';
import { redisTlsOptions } from '../store/redis/redis-tls';
import { parseHostPort } from '../telemetry/metrics-server';
import { sharedStatsLimitsFromEnv } from '../telemetry/shared-stats-options';
import { booleanEnv } from './boolean-env';
import { isLoopbackHost } from './loopback';
import { packageVersion } from './package-version';
import { refusedAs, SettingError } from './startup-failure';

/** The settings of `dispatchd`, from flags, then environment variables, then defaults. */
export interface DaemonOptions {
  /** @default 127.0.0.1:50051 */
  readonly listen: string;
  readonly redisUrl?: string;
  /** @default examples/tools.yaml in the package */
  readonly configFile?: string;
  /** Drain time on SIGTERM. @default 10000 */
  readonly graceMs: number;
  readonly insecure: boolean;
  readonly metricsListen?: string;
  readonly tls?: TlsFiles;
  /**
   * Where each setting given came from, by flag name: `--listen`, or `DISPATCH_LISTEN` when the
   * variable set it. An error found later (a TLS file that cannot be read) names that source.
   */
  readonly sources: Readonly<Record<string, string>>;
}

/** `--help` (`-h`) or `--version`: its message (the usage, the version) goes to standard output and dispatchd exits 0. */
export class HelpRequested extends Error {}

export const USAGE = `usage: dispatchd [--listen HOST:PORT] [--redis URL] [--config FILE] [--grace MS]
                 [--insecure] [--metrics-listen HOST:PORT]
                 [--tls-cert F --tls-key F [--tls-ca F] [--tls-refresh-ms MS]]
       dispatchd -h | --help | --version
  environment: DISPATCH_LISTEN, DISPATCH_REDIS_URL, DISPATCH_REDIS_PASSWORD (the master's),
               DISPATCH_REDIS_SENTINEL_USERNAME, DISPATCH_REDIS_SENTINEL_PASSWORD (the Sentinels'
               own), DISPATCH_REDIS_TLS_CA, DISPATCH_REDIS_TLS_CERT, DISPATCH_REDIS_TLS_KEY (PEM
               files for rediss://, rediss-sentinel://, rediss-cluster://), DISPATCH_CONFIG,
               DISPATCH_GRACE_MS, DISPATCH_AUTH_TOKENS_FILE, DISPATCH_INSECURE=true,
               DISPATCH_METRICS_LISTEN, DISPATCH_TLS_CERT, DISPATCH_TLS_KEY, DISPATCH_TLS_CA,
               DISPATCH_TLS_REFRESH_MS, DISPATCH_STATS_FLUSH_MS (with --redis:
               how often GetToolStats' counts are shared, default 1000), DISPATCH_LOG_LEVEL
               (debug, info, warn or error, in any case; default info), OTEL_* (OpenTelemetry);
               an empty variable counts as unset; another DISPATCH_* name is warned about
  signals:     SIGTERM, SIGINT and SIGHUP drain (--grace) and stop: dispatchd does not reload
               on SIGHUP (the tokens file is re-read when it changes; other settings need a
               restart)`;

/**
 * Parses argv and the environment; throws an Error with a one-line message on bad input (a
 * SettingError naming the flag or variable, or parseArgs' own for a flag it cannot parse). An empty
 * environment variable counts as unset (a chart or a compose file often writes `VAR: ""`); an
 * empty flag is refused.
 */
export function parseDaemonOptions(argv: readonly string[], env: NodeJS.ProcessEnv): DaemonOptions {
  const { values: flags } = parseArgs({
    args: [...argv],
    options: {
      listen: { type: 'string' },
      redis: { type: 'string' },
      config: { type: 'string' },
      grace: { type: 'string' },
      insecure: { type: 'boolean' },
      'metrics-listen': { type: 'string' },
      'tls-cert': { type: 'string' },
      'tls-key': { type: 'string' },
      'tls-ca': { type: 'string' },
      'tls-refresh-ms': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean' },
    },
    strict: true,
  });
  if (flags.help) throw new HelpRequested(USAGE);
  if (flags.version) throw new HelpRequested(`dispatchd ${packageVersion()}`);
  const sources: Record<string, string> = {};
  const setting = (flag: Exclude<keyof typeof flags, 'insecure' | 'help' | 'version'>, name: string): string | undefined => {
    if (flags[flag] === '') throw new SettingError(`--${flag}`, `--${flag} must not be empty`);
    if (flags[flag] !== undefined) sources[flag] = `--${flag}`;
    else if (env[name] !== undefined && env[name] !== '') sources[flag] = name;
    return flags[flag] ?? (env[name] === '' ? undefined : env[name]);
  };
  /** The flag or variable that set `flag`, as errors name it. */
  const source = (flag: string) => sources[flag] ?? `--${flag}`;
  const listen = setting('listen', 'DISPATCH_LISTEN') ?? '127.0.0.1:50051';
  checkListen(source('listen'), listen);
  const graceText = setting('grace', 'DISPATCH_GRACE_MS') ?? '10000';
  // Decimal digits only: Number() would read " " as 0 and "0x10" as 16.
  const graceMs = /^\d+$/.test(graceText) ? Number(graceText) : NaN;
  if (!Number.isInteger(graceMs) || graceMs < 0) throw new SettingError(source('grace'), `${source('grace')} must be a non-negative integer of milliseconds, got ${JSON.stringify(graceText)}`);
  // Node runs a longer timer after 1 ms: the drain would end at once.
  if (graceMs > MAX_TIMER_MS) throw new SettingError(source('grace'), `${source('grace')} must be at most ${MAX_TIMER_MS} ms, got ${JSON.stringify(graceText)}`);
  const metricsListen = setting('metrics-listen', 'DISPATCH_METRICS_LISTEN');
  if (metricsListen !== undefined) checkListen(source('metrics-listen'), metricsListen);
  const cert = setting('tls-cert', 'DISPATCH_TLS_CERT');
  const key = setting('tls-key', 'DISPATCH_TLS_KEY');
  const ca = setting('tls-ca', 'DISPATCH_TLS_CA');
  if ((cert === undefined) !== (key === undefined)) {
    const [given, missing] = cert === undefined ? ['tls-key', 'tls-cert'] : ['tls-cert', 'tls-key'];
    throw new SettingError(source(given), `${source(given)} is set without --${missing} (or DISPATCH_${missing.replace('-', '_').toUpperCase()}): the certificate and its key are given together`);
  }
  if (ca !== undefined && cert === undefined) throw new SettingError(source('tls-ca'), `${source('tls-ca')} needs --tls-cert and --tls-key (or DISPATCH_TLS_CERT and DISPATCH_TLS_KEY): without them dispatchd would serve plaintext and check no client certificate`);
  const refreshText = setting('tls-refresh-ms', 'DISPATCH_TLS_REFRESH_MS');
  const refreshIntervalMs = refusedAs(source('tls-refresh-ms'), () => namingSources({ sources }, () => resolveTlsRefreshIntervalMs(refreshText)));
  // Read by the shared tool stats only once Redis is connected, and not at all without Redis: a
  // bad value is refused here, with the other settings.
  refusedAs('DISPATCH_STATS_FLUSH_MS', () => sharedStatsLimitsFromEnv(env));
  const redisUrl = setting('redis', 'DISPATCH_REDIS_URL');
  if (redisUrl !== undefined) checkRedisUrl(source('redis'), redisUrl, env);
  return {
    listen,
    redisUrl,
    configFile: setting('config', 'DISPATCH_CONFIG'),
    graceMs,
    insecure: flags.insecure ?? refusedAs('DISPATCH_INSECURE', () => booleanEnv(env, 'DISPATCH_INSECURE')) ?? false,
    metricsListen,
    tls: cert !== undefined && key !== undefined ? { cert, key, ca, refreshIntervalMs } : undefined,
    sources,
  };
}

/** Throws unless `listen` is HOST:PORT with a port in range; `name` is the flag or variable that gave it. */
function checkListen(name: string, listen: string): void {
  try {
    parseHostPort(listen);
  } catch {
    throw new SettingError(name, `${name} must be HOST:PORT with a port from 0 to 65535, got ${JSON.stringify(listen)}`);
  }
}

/** Throws unless `url` is a Redis URL dispatch connects to; `name` is the flag or variable that gave it. */
function checkRedisUrl(name: string, url: string, env: NodeJS.ProcessEnv): void {
  try {
    // The TLS files read now too: one that cannot be read stops the start here, naming its variable.
    if (parseRedisUrl(url, env).tls) redisTlsOptions(env);
  } catch (error) {
    throw new SettingError(name, `${name}: ${(error as Error).message}`, 'invalid_redis_url', { cause: error });
  }
}

/**
 * Runs `work`; an error it throws naming a flag (`cannot read --tls-ca ...`, from code that knows
 * only the flags) is thrown again naming the variable that gave the value instead, if one did.
 */
export function namingSources<T>(options: Pick<DaemonOptions, 'sources'>, work: () => T): T {
  try {
    return work();
  } catch (error) {
    throw renamed(error, options.sources);
  }
}

/** `error` with each `--flag` its message names replaced by the variable that set the flag, if one did. */
export function renamed(error: unknown, sources: Readonly<Record<string, string>>): unknown {
  if (!(error instanceof Error)) return error;
  let message = error.message;
  for (const [flag, name] of Object.entries(sources)) {
    if (name !== `--${flag}`) message = message.replace(new RegExp(`--${flag}(?![\\w-])`, 'g'), name);
  }
  return message === error.message ? error : new Error(message, { cause: error });
}

/**
 * True when `listen` (`HOST:PORT`, `[V6]:PORT`) names a host only this machine can reach: a
 * literal loopback IP or `localhost` (isLoopbackHost). Without authentication dispatchd listens
 * on such hosts alone.
 */
export function isLoopback(listen: string): boolean {
  return isLoopbackHost(listen.slice(0, listen.lastIndexOf(':')));
}
