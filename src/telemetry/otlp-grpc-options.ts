import { parseKeyPairsIntoRecord } from '@opentelemetry/core';
import type { Logger } from '../log';

/** The OTLP transports dispatch can export traces over. */
export type OtlpProtocol = 'http/protobuf' | 'grpc';

/** The OTLP protocol when OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL is unset, as the specification sets it. */
export const DEFAULT_OTLP_PROTOCOL: OtlpProtocol = 'http/protobuf';

/** Where OTLP/gRPC goes when neither endpoint variable is set, as the specification sets it. */
export const DEFAULT_OTLP_GRPC_ENDPOINT = 'http://localhost:4317';

/** How long one export may take, retries included, when OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT is unset. */
export const DEFAULT_OTLP_TIMEOUT_MS = 10_000;

/** OTLP/gRPC trace export, as the OTEL_EXPORTER_OTLP_* variables configure it. */
export interface OtlpGrpcOptions {
  /** The endpoint as configured. @default DEFAULT_OTLP_GRPC_ENDPOINT */
  readonly endpoint: string;
  /** The gRPC target, `host:port` (the endpoint's path, if any, is not used). */
  readonly address: string;
  /** TLS, from the scheme (https) or, without one, unless OTEL_EXPORTER_OTLP_(TRACES_)INSECURE=true. */
  readonly secure: boolean;
  /** Sent as metadata on every export. */
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

const variables = (suffix: string) => [`OTEL_EXPORTER_OTLP_TRACES_${suffix}`, `OTEL_EXPORTER_OTLP_${suffix}`];

/**
 * The value of OTEL_EXPORTER_OTLP_TRACES_{suffix} if set and not blank, else of
 * OTEL_EXPORTER_OTLP_{suffix}; undefined when neither is set, or when the one set is invalid (it is
 * reported as `must be {expected}`, and the default applies).
 */
function setting<T>(env: NodeJS.ProcessEnv, suffix: string, parse: (raw: string) => T | undefined, expected = '', logger?: Logger): T | undefined {
  const name = variables(suffix).find((n) => env[n]?.trim());
  if (name === undefined) return undefined;
  const raw = env[name]!.trim();
  const value = parse(raw);
  if (value === undefined) logger?.warn(`${name} must be ${expected}; using the default`, { [name]: raw });
  return value;
}

const asIs = (raw: string) => raw;

/**
 * The protocol of OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL, else
 * http/protobuf. Other values (http/json) are reported and http/protobuf is used.
 */
export function otlpTracesProtocol(env: NodeJS.ProcessEnv, logger?: Logger): OtlpProtocol {
  const supported = (raw: string) => (raw === 'grpc' || raw === 'http/protobuf' ? raw : undefined);
  return setting(env, 'PROTOCOL', supported, 'grpc or http/protobuf', logger) ?? DEFAULT_OTLP_PROTOCOL;
}

/** `host:port` and TLS of a gRPC endpoint, or undefined when it is not an http(s) URL or `host:port`. */
function target(endpoint: string, insecure: boolean, logger?: Logger): { address: string; secure: boolean } | undefined {
  const hasScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(endpoint);
  let url: URL;
  try {
    url = new URL(hasScheme ? endpoint : `https://${endpoint}`);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.pathname !== '/' && url.pathname !== '') logger?.warn('an OTLP/gRPC endpoint has no path; the path is ignored', { endpoint });
  const secure = hasScheme ? url.protocol === 'https:' : !insecure;
  const port = url.port || (url.protocol === 'http:' ? '80' : '443');
  return { address: `${url.hostname}:${port}`, secure };
}

/**
 * OTLP/gRPC trace export from the standard variables, each OTEL_EXPORTER_OTLP_TRACES_* one taking
 * precedence over its OTEL_EXPORTER_OTLP_* one: the endpoint, used as is (no `/v1/traces`
 * appended; scheme https means TLS, http plaintext, none TLS unless INSECURE=true), headers as
 * metadata, the timeout, gzip compression and the certificate files. A bad value is reported and
 * its default used.
 */
export function otlpGrpcOptionsFromEnv(env: NodeJS.ProcessEnv, logger?: Logger): OtlpGrpcOptions {
  const insecure = setting(env, 'INSECURE', asIs)?.toLowerCase() === 'true';
  const withTarget = (raw: string) => {
    const resolved = target(raw, insecure, logger);
    return resolved && { endpoint: raw, ...resolved };
  };
  const endpoint = setting(env, 'ENDPOINT', withTarget, 'an http(s) URL or host:port', logger) ?? withTarget(DEFAULT_OTLP_GRPC_ENDPOINT)!;
  const positive = (raw: string) => (Number.isFinite(Number(raw)) && Number(raw) > 0 ? Number(raw) : undefined);
  const gzipOrNone = (raw: string) => (raw === 'gzip' || raw === 'none' ? raw : undefined);
  return {
    ...endpoint,
    // `k1=v1,k2=v2`, URL-decoded, parsed as OpenTelemetry's HTTP exporter parses them.
    headers: { ...parseKeyPairsIntoRecord(env.OTEL_EXPORTER_OTLP_HEADERS), ...parseKeyPairsIntoRecord(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS) },
    timeoutMs: setting(env, 'TIMEOUT', positive, 'a number of milliseconds > 0', logger) ?? DEFAULT_OTLP_TIMEOUT_MS,
    compression: setting(env, 'COMPRESSION', gzipOrNone, 'gzip or none', logger) ?? 'none',
    certificateFile: setting(env, 'CERTIFICATE', asIs),
    clientCertificateFile: setting(env, 'CLIENT_CERTIFICATE', asIs),
    clientKeyFile: setting(env, 'CLIENT_KEY', asIs),
  };
}
