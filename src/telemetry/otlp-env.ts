import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseKeyPairsIntoRecord } from '@opentelemetry/core';
import type { Logger } from '../log';

/** How long one export may take, retries included, when OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT is unset. */
export const DEFAULT_OTLP_TIMEOUT_MS = 10_000;

const variables = (suffix: string) => [`OTEL_EXPORTER_OTLP_TRACES_${suffix}`, `OTEL_EXPORTER_OTLP_${suffix}`];

/**
 * The value of OTEL_EXPORTER_OTLP_TRACES_{suffix} if set and not blank, else of
 * OTEL_EXPORTER_OTLP_{suffix}; undefined when neither is set, or when the one set is invalid (it is
 * reported as `must be {expected}`, and the default applies).
 */
export function otlpSetting<T>(env: NodeJS.ProcessEnv, suffix: string, parse: (raw: string) => T | undefined, expected = '', logger?: Logger): T | undefined {
  const name = variables(suffix).find((n) => env[n]?.trim());
  if (name === undefined) return undefined;
  const raw = env[name]!.trim();
  const value = parse(raw);
  if (value === undefined) logger?.warn(`${name} must be ${expected}; using the default`, { [name]: raw });
  return value;
}

export const asIs = (raw: string) => raw;

/** What both OTLP transports read alike from the OTEL_EXPORTER_OTLP_(TRACES_)* variables. */
export interface OtlpSharedOptions {
  /** HTTP headers, or gRPC metadata. */
  readonly headers: Readonly<Record<string, string>>;
  /** The deadline of one export, retries included. @default DEFAULT_OTLP_TIMEOUT_MS */
  readonly timeoutMs: number;
  /** @default 'none' */
  readonly compression: 'gzip' | 'none';
  /** Files of the TLS root certificates, the client certificate chain and its key. */
  readonly certificateFile?: string;
  readonly clientCertificateFile?: string;
  readonly clientKeyFile?: string;
}

/** Headers, timeout, compression and certificate files; a bad timeout or compression is reported and its default used. */
export function otlpSharedOptionsFromEnv(env: NodeJS.ProcessEnv, logger?: Logger): OtlpSharedOptions {
  const positive = (raw: string) => (Number.isFinite(Number(raw)) && Number(raw) > 0 ? Number(raw) : undefined);
  const gzipOrNone = (raw: string) => (raw === 'gzip' || raw === 'none' ? raw : undefined);
  return {
    // `k1=v1,k2=v2`, URL-decoded, parsed as OpenTelemetry's HTTP exporter parses them.
    headers: { ...parseKeyPairsIntoRecord(env.OTEL_EXPORTER_OTLP_HEADERS), ...parseKeyPairsIntoRecord(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS) },
    timeoutMs: otlpSetting(env, 'TIMEOUT', positive, 'a number of milliseconds > 0', logger) ?? DEFAULT_OTLP_TIMEOUT_MS,
    compression: otlpSetting(env, 'COMPRESSION', gzipOrNone, 'gzip or none', logger) ?? 'none',
    certificateFile: otlpSetting(env, 'CERTIFICATE', asIs),
    clientCertificateFile: otlpSetting(env, 'CLIENT_CERTIFICATE', asIs),
    clientKeyFile: otlpSetting(env, 'CLIENT_KEY', asIs),
  };
}

/** The contents of the TLS files; each undefined when not configured or not readable. */
export interface OtlpTlsFiles {
  readonly ca?: Buffer;
  readonly key?: Buffer;
  readonly cert?: Buffer;
}

function readFile(path: string | undefined, what: string, logger?: Logger): Buffer | undefined {
  if (path === undefined) return undefined;
  try {
    return readFileSync(resolve(path));
  } catch (error) {
    logger?.warn(`trace export: cannot read the ${what}; going on without it`, { path, error: (error as Error).message });
    return undefined;
  }
}

/**
 * Reads the certificate files, as OpenTelemetry's HTTP exporter does: an unreadable one is
 * reported and left out, and a client key without its chain (or the reverse) is reported and
 * neither is used.
 */
export function readOtlpTlsFiles(options: OtlpSharedOptions, logger?: Logger): OtlpTlsFiles {
  const ca = readFile(options.certificateFile, 'root certificate file (OTEL_EXPORTER_OTLP_CERTIFICATE)', logger);
  const key = readFile(options.clientKeyFile, 'client key file (OTEL_EXPORTER_OTLP_CLIENT_KEY)', logger);
  const cert = readFile(options.clientCertificateFile, 'client certificate file (OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE)', logger);
  if ((key === undefined) !== (cert === undefined)) {
    logger?.warn('trace export: a client key and certificate go together; using neither');
    return { ca };
  }
  return { ca, key, cert };
}
