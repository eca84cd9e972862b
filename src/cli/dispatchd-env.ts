/**
 * Every DISPATCH_* environment variable dispatchd reads (USAGE and the README describe each). A
 * misspelt one did nothing, silently: dispatchd warns at start about any other DISPATCH_* name.
 */
export const DAEMON_ENV: readonly string[] = [
  'DISPATCH_LISTEN',
  'DISPATCH_REDIS_URL',
  'DISPATCH_REDIS_PASSWORD',
  'DISPATCH_REDIS_SENTINEL_USERNAME',
  'DISPATCH_REDIS_SENTINEL_PASSWORD',
  'DISPATCH_REDIS_TLS_CA',
  'DISPATCH_REDIS_TLS_CERT',
  'DISPATCH_REDIS_TLS_KEY',
  'DISPATCH_CONFIG',
  'DISPATCH_GRACE_MS',
  'DISPATCH_AUTH_TOKENS_FILE',
  'DISPATCH_INSECURE',
  'DISPATCH_METRICS_LISTEN',
  'DISPATCH_TLS_CERT',
  'DISPATCH_TLS_KEY',
  'DISPATCH_TLS_CA',
  'DISPATCH_TLS_REFRESH_MS',
  'DISPATCH_STATS_FLUSH_MS',
  'DISPATCH_LOG_LEVEL',
];

/**
 * DISPATCH_* variables of the clients (dispatchctl, the Python examples) and of the CI script,
 * which dispatchd does not read: one shell or pod may set them for both, so they are not warned about.
 */
const OTHER_ENV: readonly string[] = ['DISPATCH_ADDRESS', 'DISPATCH_TOKEN', 'DISPATCH_KEEPALIVE_MS', 'DISPATCH_KEEPALIVE_TIMEOUT_MS', 'DISPATCH_ALLOW_PLAINTEXT_TOKEN', 'DISPATCH_PY_STUBS', 'DISPATCH_TLS', 'DISPATCH_CI'];

/** The DISPATCH_* names in `env` that neither dispatchd nor its clients read, sorted. */
export function unknownDaemonEnv(env: NodeJS.ProcessEnv): string[] {
  return Object.keys(env)
    .filter((name) => name.startsWith('DISPATCH_') && !DAEMON_ENV.includes(name) && !OTHER_ENV.includes(name))
    .sort();
}
