import { parseArgs } from 'node:util';
import { resolveTlsRefreshIntervalMs, type TlsFiles } from '../auth';

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

export const USAGE = `usage: dispatchd [--listen HOST:PORT] [--redis URL] [--config FILE] [--grace MS]
                 [--insecure] [--metrics-listen HOST:PORT]
                 [--tls-cert F --tls-key F [--tls-ca F] [--tls-refresh-ms MS]]
  environment: DISPATCH_LISTEN, DISPATCH_REDIS_URL, DISPATCH_REDIS_PASSWORD (the master's),
               DISPATCH_REDIS_SENTINEL_USERNAME, DISPATCH_REDIS_SENTINEL_PASSWORD (the Sentinels'
               own), DISPATCH_CONFIG, DISPATCH_GRACE_MS,
               DISPATCH_INSECURE=1, DISPATCH_METRICS_LISTEN, DISPATCH_TLS_CERT, DISPATCH_TLS_KEY,
               DISPATCH_TLS_CA, DISPATCH_TLS_REFRESH_MS, DISPATCH_STATS_FLUSH_MS (with --redis:
               how often GetToolStats' counts are shared, default 1000), OTEL_* (OpenTelemetry)`;

/** Parses argv and the environment; throws an Error with a one-line message on bad input. */
export function parseDaemonOptions(argv: readonly string[], env: NodeJS.ProcessEnv): DaemonOptions {
  const { values } = parseArgs({
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
  if (values.help) throw new Error(USAGE);
  const listen = values.listen ?? env.DISPATCH_LISTEN ?? '127.0.0.1:50051';
  if (!/^(\[[0-9a-fA-F:.]+\]|[^:\s]+):\d{1,5}$/.test(listen)) throw new Error(`--listen must be HOST:PORT, got ${JSON.stringify(listen)}`);
  const graceText = values.grace ?? env.DISPATCH_GRACE_MS ?? '10000';
  const graceMs = Number(graceText);
  if (!Number.isInteger(graceMs) || graceMs < 0) throw new Error(`--grace must be a non-negative integer of milliseconds, got ${JSON.stringify(graceText)}`);
  const cert = values['tls-cert'] ?? env.DISPATCH_TLS_CERT;
  const key = values['tls-key'] ?? env.DISPATCH_TLS_KEY;
  if ((cert === undefined) !== (key === undefined)) throw new Error('--tls-cert and --tls-key must be given together');
  const refreshIntervalMs = resolveTlsRefreshIntervalMs(values['tls-refresh-ms'] ?? env.DISPATCH_TLS_REFRESH_MS);
  return {
    listen,
    redisUrl: values.redis ?? env.DISPATCH_REDIS_URL ?? undefined,
    configFile: values.config ?? env.DISPATCH_CONFIG ?? undefined,
    graceMs,
    insecure: values.insecure ?? env.DISPATCH_INSECURE === '1',
    metricsListen: values['metrics-listen'] ?? env.DISPATCH_METRICS_LISTEN ?? undefined,
    tls: cert && key ? { cert, key, ca: values['tls-ca'] ?? env.DISPATCH_TLS_CA ?? undefined, refreshIntervalMs } : undefined,
  };
}

/** True for addresses only this machine can reach. */
export function isLoopback(listen: string): boolean {
  const host = listen.slice(0, listen.lastIndexOf(':')).replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}
