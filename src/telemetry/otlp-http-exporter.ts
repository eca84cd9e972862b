import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import { createOtlpHttpExportDelegate, httpAgentFactoryFromOptions } from '@opentelemetry/otlp-exporter-base/node-http';
import type { Logger } from '../log';
import { otlpSetting, otlpSharedOptionsFromEnv, readOtlpTlsFiles, type OtlpSharedOptions } from './otlp-env';
import { otlpJsonOfTraces } from './otlp-json';
import type { BatchExporter, EncodedBatch } from './span-batcher';

/** Where OTLP/HTTP goes when neither endpoint variable is set, as the specification sets it. */
export const DEFAULT_OTLP_HTTP_URL = 'http://localhost:4318/v1/traces';

/** OTLP/HTTP protobuf trace export, as the OTEL_EXPORTER_OTLP_* variables configure it. */
export interface OtlpHttpOptions extends OtlpSharedOptions {
  /** Where batches are POSTed. @default DEFAULT_OTLP_HTTP_URL */
  readonly url: string;
}

function httpUrl(raw: string): string | undefined {
  try {
    const url = new URL(raw);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/**
 * OTLP/HTTP export from the standard variables, as OpenTelemetry's OTLPTraceExporter reads them:
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT used as is, else OTEL_EXPORTER_OTLP_ENDPOINT with `/v1/traces`
 * appended; headers, timeout, compression and certificate files as over gRPC (`otlp-env.ts`). A bad
 * value is reported and its default used.
 */
export function otlpHttpOptionsFromEnv(env: NodeJS.ProcessEnv, logger?: Logger): OtlpHttpOptions {
  const specific = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  // otlpSetting hands over the traces endpoint when it is set, else the generic one, which gets the path.
  const withPath = (raw: string) => httpUrl(raw === specific ? raw : `${raw.replace(/\/?$/, '/')}v1/traces`);
  const url = otlpSetting(env, 'ENDPOINT', withPath, 'an http(s) URL', logger) ?? DEFAULT_OTLP_HTTP_URL;
  return { url, ...otlpSharedOptionsFromEnv(env, logger) };
}

/** ExportResultCode.SUCCESS of @opentelemetry/core. */
const EXPORT_SUCCESS = 0;

/** OpenTelemetry's default for OTLP exporters: exports in flight at once. */
const CONCURRENCY_LIMIT = 30;

/**
 * OpenTelemetry's OTLP/HTTP transport, with its retries, for encoded batches; configured by
 * `options` alone (nothing is read from `process.env`), so every bad setting is reported once, by
 * dispatch, and not left to OpenTelemetry's `diag`. The certificate files are read for an https
 * URL only, as over gRPC; only the encoding is ours. `http/json` sends each batch as OTLP/JSON,
 * read back from its protobuf (otlp-json.ts).
 */
export function otlpHttpExporter(options: OtlpHttpOptions, logger?: Logger, protocol: 'http/protobuf' | 'http/json' = 'http/protobuf'): BatchExporter {
  const tls = new URL(options.url).protocol === 'https:' ? readOtlpTlsFiles(options, logger) : {};
  const json = protocol === 'http/json';
  const headers = { ...options.headers, 'Content-Type': json ? 'application/json' : 'application/x-protobuf' };
  const serializer = json ? JsonTraceSerializer : ProtobufTraceSerializer;
  const serializeRequest = json ? (batch: EncodedBatch) => Buffer.from(otlpJsonOfTraces(batch.bytes)) : (batch: EncodedBatch) => batch.bytes;
  const delegate = createOtlpHttpExportDelegate<EncodedBatch, unknown>(
    {
      url: options.url,
      headers: async () => ({ ...headers }),
      timeoutMillis: options.timeoutMs,
      compression: options.compression,
      concurrencyLimit: CONCURRENCY_LIMIT,
      agentFactory: httpAgentFactoryFromOptions({ keepAlive: true, ...tls }),
    },
    { serializeRequest, deserializeResponse: (data) => (data.length === 0 ? {} : serializer.deserializeResponse(data)) },
    'otlp_http_span_exporter',
    { name: 'span', countItems: (batch) => batch.spans },
    undefined,
  );
  const base = new OTLPExporterBase<EncodedBatch>(delegate);
  return {
    export: (batch) =>
      new Promise((resolve, reject) => base.export(batch, (result) => (result.code === EXPORT_SUCCESS ? resolve() : reject(result.error ?? new Error('export failed'))))),
    shutdown: () => base.shutdown(),
  };
}
