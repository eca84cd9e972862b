import { parseArgs } from 'node:util';
import { resolveTlsRefreshIntervalMs, type TlsFiles } from '../auth';
import { MAX_TIMER_MS } from '../options/limits';
import { parseHostPort } from '../telemetry';
import { isLoopbackHost } from './loopback';

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
}

/** `--help`: the usage goes to standard output and dispatchd exits 0 (its message is the usage). */
export class HelpRequested extends Error {}

export const USAGE = `usage: dispatchd [--listen HOST:PORT] [--redis URL] [--config FILE] [--grace MS]
                 [--insecure] [--metrics-listen HOST:PORT]
                 [--tls-cert F --tls-key F [--tls-ca F] [--tls-refresh-ms MS]]
  environment: DISPATCH_LISTEN, DISPATCH_REDIS_URL, DISPATCH_REDIS_PASSWORD (the master's),
               DISPATCH_REDIS_SENTINEL_USERNAME, DISPATCH_REDIS_SENTINEL_PASSWORD (the Sentinels'
               own), DISPATCH_CONFIG, DISPATCH_GRACE_MS, DISPATCH_AUTH_TOKENS_FILE,
               DISPATCH_INSECURE=1, DISPATCH_METRICS_LISTEN, DISPATCH_TLS_CERT, DISPATCH_TLS_KEY,
               DISPATCH_TLS_CA, DISPATCH_TLS_REFRESH_MS, DISPATCH_STATS_FLUSH_MS (with --redis:
               how often GetToolStats' counts are shared, default 1000), DISPATCH_LOG_LEVEL
               (debug, info, warn or error, in any case; default info), OTEL_* (OpenTelemetry);
               an empty variable counts as unset; another DISPATCH_* name is warned about`;

/**
 * Parses argv and the environment; throws an Error with a one-line message on bad input. An empty
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
      help: { type: 'boolean' },
    },
    strict: true,
  });
  if (flags.help) throw new HelpRequested(USAGE);
  const setting = (flag: Exclude<keyof typeof flags, 'insecure' | 'help'>, name: string): string | undefined => {
    if (flags[flag] === '') throw new Error(`--${flag} must not be empty`);
    return flags[flag] ?? (env[name] === '' ? undefined : env[name]);
  };
  const listen = setting('listen', 'DISPATCH_LISTEN') ?? '127.0.0.1:50051';
  try {
    parseHostPort(listen);
  } catch {
    throw new Error(`--listen must be HOST:PORT with a port from 0 to 65535, got ${JSON.stringify(listen)}`);
  }
  const graceText = setting('grace', 'DISPATCH_GRACE_MS') ?? '10000';
  // Decimal digits only: Number() would read " " as 0 and "0x10" as 16.
  const graceMs = /^\d+$/.test(graceText) ? Number(graceText) : NaN;
  if (!Number.isInteger(graceMs) || graceMs < 0) throw new Error(`--grace must be a non-negative integer of milliseconds, got ${JSON.stringify(graceText)}`);
  // Node runs a longer timer after 1 ms: the drain would end at once.
  if (graceMs > MAX_TIMER_MS) throw new Error(`--grace must be at most ${MAX_TIMER_MS} ms, got ${JSON.stringify(graceText)}`);
  const cert = setting('tls-cert', 'DISPATCH_TLS_CERT');
  const key = setting('tls-key', 'DISPATCH_TLS_KEY');
  const ca = setting('tls-ca', 'DISPATCH_TLS_CA');
  if ((cert === undefined) !== (key === undefined)) throw new Error('--tls-cert and --tls-key must be given together');
  if (ca !== undefined && cert === undefined) throw new Error('--tls-ca (DISPATCH_TLS_CA) needs --tls-cert and --tls-key: without them dispatchd would serve plaintext and check no client certificate');
  const refreshIntervalMs = resolveTlsRefreshIntervalMs(setting('tls-refresh-ms', 'DISPATCH_TLS_REFRESH_MS'));
  return {
    listen,
    redisUrl: setting('redis', 'DISPATCH_REDIS_URL'),
    configFile: setting('config', 'DISPATCH_CONFIG'),
    graceMs,
    insecure: flags.insecure ?? env.DISPATCH_INSECURE === '1',
    metricsListen: setting('metrics-listen', 'DISPATCH_METRICS_LISTEN'),
    tls: cert !== undefined && key !== undefined ? { cert, key, ca, refreshIntervalMs } : undefined,
  };
}

/**
 * True when `listen` (`HOST:PORT`, `[V6]:PORT`) names a host only this machine can reach: a
 * literal loopback IP or `localhost` (isLoopbackHost). Without authentication dispatchd listens
 * on such hosts alone.
 */
export function isLoopback(listen: string): boolean {
  return isLoopbackHost(listen.slice(0, listen.lastIndexOf(':')));
}
