import { REDACTED, redactedUrl } from '../events/http-client-attributes';
import type { SpanTracer } from '../events/span-record';
import type { Logger } from '../log';
import { otlpGrpcExporter } from './otlp-grpc-exporter';
import { otlpGrpcOptionsFromEnv, otlpTracesProtocol, type OtlpProtocol } from './otlp-grpc-options';
import { requestFrame } from './otlp-request';
import { batchOptionsFromEnv, SpanBatcher, type BatchExporter } from './span-batcher';
import { createSpanTracer } from './span-tracer';
import { serviceResource } from './service-resource';

/** Trace export, when the environment asks for it. */
export interface Tracing {
  /** Undefined when traces are off. */
  readonly tracer: SpanTracer | undefined;
  /** Exports every finished span now. */
  forceFlush(): Promise<void>;
  /** Flushes, then stops exporting. */
  shutdown(): Promise<void>;
  /** Spans lost so far: dropped for a full queue, and in batches that failed to export; undefined when traces are off. */
  lost(): { readonly dropped: number; readonly failedBatches: number } | undefined;
}

export { DEFAULT_SERVICE_NAME } from './service-resource';

const listOf = (value: string | undefined) => (value ?? '').split(',').map((s) => s.trim().toLowerCase()).filter((s) => s !== '');

/**
 * True when the standard variables ask for trace export: an OTLP endpoint
 * (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) or OTEL_TRACES_EXPORTER=otlp,
 * and neither OTEL_SDK_DISABLED=true nor OTEL_TRACES_EXPORTER=none.
 */
export function tracesEnabled(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = listOf(env.OTEL_TRACES_EXPORTER);
  if (exporters.includes('none')) return false;
  if (exporters.includes('otlp')) return true;
  return exporters.length === 0 && Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

const OFF: Tracing = { tracer: undefined, forceFlush: async () => undefined, shutdown: async () => undefined, lost: () => undefined };

/** An exporter and where it sends, for the start-up line. */
interface ChosenExporter {
  readonly exporter: BatchExporter;
  readonly protocol: OtlpProtocol;
  /** Where spans go: the gRPC target as a URL, or the HTTP URL with credentials and query values redacted. */
  readonly endpoint: string;
}

/**
 * The exporter OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL names: `grpc` (`otlp-grpc-exporter.ts`), else
 * OpenTelemetry's OTLP/HTTP transport (`otlp-http-exporter.ts`), protobuf or `http/json`; all set by `env`.
 */
function exporterFromEnv(env: NodeJS.ProcessEnv, logger?: Logger): ChosenExporter {
  const protocol = otlpTracesProtocol(env, logger);
  if (protocol === 'grpc') {
    const options = otlpGrpcOptionsFromEnv(env, logger);
    return { exporter: otlpGrpcExporter(options, logger), protocol: 'grpc', endpoint: `${options.secure ? 'https' : 'http'}://${options.address}` };
  }
  // Loaded here, not with the module: OpenTelemetry's OTLP/HTTP transport and serializer, which a
  // dispatch exporting no traces (or over gRPC) never needs.
  const { otlpHttpExporter, otlpHttpOptionsFromEnv } = require('./otlp-http-exporter') as typeof import('./otlp-http-exporter');
  const options = otlpHttpOptionsFromEnv(env, logger);
  return { exporter: otlpHttpExporter(options, logger, protocol), protocol, endpoint: redactedUrl(options.url, true) ?? REDACTED };
}

/** Why `env` leaves traces off, for the start-up line. */
function offReason(env: NodeJS.ProcessEnv, exporters: readonly string[]): string {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return 'OTEL_SDK_DISABLED=true';
  if (exporters.includes('none')) return 'OTEL_TRACES_EXPORTER=none';
  if (exporters.length > 0) return 'OTEL_TRACES_EXPORTER names no otlp';
  return 'no OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_TRACES_EXPORTER=otlp';
}

/**
 * OTLP trace export (protobuf over HTTP, or over gRPC), configured by the standard OTEL_*
 * variables (protocol, endpoint, headers, timeout, compression, certificates, sampler, batch
 * sizes). Spans are made by dispatch's own tracer (`span-tracer.ts`), encoded as they end
 * (`otlp-span-encoding.ts`), batched (`span-batcher.ts`) and sent by OpenTelemetry's OTLP/HTTP
 * transport or dispatch's OTLP/gRPC one. Nothing is registered globally and no context manager is
 * installed; parents are passed explicitly. `env` decides whether traces are on, the protocol, the
 * sampler, the batch and the transport's settings; a bad one is logged and its default used. One
 * info line says which: `trace export on` (exporter, protocol, endpoint, sampler) or `trace export
 * off` (the reason).
 */
export function createTracing(env: NodeJS.ProcessEnv = process.env, logger?: Logger): Tracing {
  const enabled = tracesEnabled(env);
  const exporters = listOf(env.OTEL_TRACES_EXPORTER);
  const unsupported = exporters.filter((e) => e !== 'otlp' && e !== 'none');
  const switchedOff = exporters.includes('none') || env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true';
  if (unsupported.length > 0 && enabled) logger?.warn('unsupported OTEL_TRACES_EXPORTER values ignored', { exporters: unsupported });
  // Without `otlp` (`console` alone, say) nothing is exported: said, or the missing traces leave no clue.
  else if (unsupported.length > 0 && !switchedOff) logger?.warn('unsupported OTEL_TRACES_EXPORTER values; traces are off (only otlp is supported)', { exporters: unsupported });
  if (!enabled) {
    logger?.info('trace export off', { reason: offReason(env, exporters) });
    return OFF;
  }
  // Loaded once traces are on, not with the module: with the OTLP/HTTP transport (exporterFromEnv),
  // ~130 modules of OpenTelemetry's SDK that a dispatch exporting no traces never needs.
  const { samplerFromEnv } = require('./sampler-from-env') as typeof import('./sampler-from-env');
  const { exporter, protocol, endpoint } = exporterFromEnv(env, logger);
  const sampler = samplerFromEnv(env, logger);
  const batcher = new SpanBatcher(requestFrame(serviceResource(), { name: 'dispatch' }), exporter, batchOptionsFromEnv(env), logger);
  logger?.info('trace export on', { exporter: 'otlp', protocol, endpoint, sampler: sampler.toString() });
  let stopped: Promise<void> | undefined;
  return {
    tracer: createSpanTracer({ sampler, sink: batcher }),
    forceFlush: () => batcher.forceFlush(),
    lost: () => ({ dropped: batcher.dropped, failedBatches: batcher.failedBatches }),
    shutdown() {
      stopped ??= batcher.shutdown().catch((error: Error) => logger?.warn('trace export shutdown failed', { error: error.message }));
      return stopped;
    },
  };
}
