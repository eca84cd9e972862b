/**
 * How often the certificate files are re-read, in ms: a minute. cert-manager renews a certificate
 * a third of its life before expiry and the kubelet takes about a minute to update a mounted
 * Secret, so a renewed certificate is served within about two minutes, long before the old one expires.
 */
export const DEFAULT_TLS_REFRESH_INTERVAL_MS = 60_000;

/** The longest refresh interval, a day (Node's timers fire at once past 2^31 - 1 ms). */
export const MAX_TLS_REFRESH_INTERVAL_MS = 86_400_000;

/**
 * The refresh interval, defaulted, from a number or the text of a flag; throws on a value that is
 * not a whole number of ms from 1 to a day. Apart from tls-credentials (and grpc-js), so that
 * dispatchd's option parsing loads neither.
 */
export function resolveTlsRefreshIntervalMs(value: number | string | undefined): number {
  // Decimal digits only, as every time flag: Number() would read "0x10" as 16 and " 5000" as 5000.
  const ms = value === undefined ? DEFAULT_TLS_REFRESH_INTERVAL_MS : typeof value === 'number' || /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(ms) || ms < 1 || ms > MAX_TLS_REFRESH_INTERVAL_MS) {
    throw new Error(`--tls-refresh-ms must be an integer from 1 to ${MAX_TLS_REFRESH_INTERVAL_MS} milliseconds, got ${JSON.stringify(value)}`);
  }
  return ms;
}
