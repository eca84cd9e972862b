import type { Logger } from '../log';
import { asIs, otlpSetting as setting, otlpSharedOptionsFromEnv, type OtlpSharedOptions } from './otlp-env';

export { DEFAULT_OTLP_TIMEOUT_MS } from './otlp-env';

/** The OTLP transports dispatch can export traces over. */
export type OtlpProtocol = 'http/protobuf' | 'http/json' | 'grpc';

/** The OTLP protocol when OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL is unset, as the specification sets it. */
export const DEFAULT_OTLP_PROTOCOL: OtlpProtocol = 'http/protobuf';

/** Where OTLP/gRPC goes when neither endpoint variable is set, as the specification sets it. */
export const DEFAULT_OTLP_GRPC_ENDPOINT = 'http://localhost:4317';

/** OTLP/gRPC trace export, as the OTEL_EXPORTER_OTLP_* variables configure it. */
export interface OtlpGrpcOptions extends OtlpSharedOptions {
  /** The endpoint as configured. @default DEFAULT_OTLP_GRPC_ENDPOINT */
  readonly endpoint: string;
  /** The gRPC target, `host:port` (the endpoint's path, if any, is not used). */
  readonly address: string;
  /** TLS, from the scheme (https) or, without one, unless OTEL_EXPORTER_OTLP_(TRACES_)INSECURE=true. */
  readonly secure: boolean;
}

/**
 * The protocol of OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL, else
 * http/protobuf: grpc, http/protobuf or http/json. Another value is reported and http/protobuf used.
 */
export function otlpTracesProtocol(env: NodeJS.ProcessEnv, logger?: Logger): OtlpProtocol {
  const supported = (raw: string) => (raw === 'grpc' || raw === 'http/protobuf' || raw === 'http/json' ? raw : undefined);
  return setting(env, 'PROTOCOL', supported, 'grpc, http/protobuf or http/json', logger) ?? DEFAULT_OTLP_PROTOCOL;
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
  return { ...endpoint, ...otlpSharedOptionsFromEnv(env, logger) };
}
