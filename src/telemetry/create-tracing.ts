import type { SpanTracer } from '../events/span-record';
import type { Logger } from '../log';
import { otlpGrpcExporter } from './otlp-grpc-exporter';
import { otlpGrpcOptionsFromEnv, otlpTracesProtocol } from './otlp-grpc-options';
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

/**
 * The exporter OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL names: `grpc` (`otlp-grpc-exporter.ts`), else
 * OpenTelemetry's OTLP/HTTP protobuf transport (`otlp-http-exporter.ts`); both set by `env`.
 */
function exporterFromEnv(env: NodeJS.ProcessEnv, logger?: Logger): BatchExporter {
  if (otlpTracesProtocol(env, logger) === 'grpc') return otlpGrpcExporter(otlpGrpcOptionsFromEnv(env, logger), logger);
  // Loaded here, not with the module: OpenTelemetry's OTLP/HTTP transport and serializer, which a
  // dispatch exporting no traces (or over gRPC) never needs.
  const { otlpHttpExporter, otlpHttpOptionsFromEnv } = require('./otlp-http-exporter') as typeof import('./otlp-http-exporter');
  return otlpHttpExporter(otlpHttpOptionsFromEnv(env, logger), logger);
}

/**
 * OTLP trace export (protobuf over HTTP, or over gRPC), configured by the standard OTEL_*
 * variables (protocol, endpoint, headers, timeout, compression, certificates, sampler, batch
 * sizes). Spans are made by dispatch's own tracer (`span-tracer.ts`), encoded as they end
 * (`otlp-span-encoding.ts`), batched (`span-batcher.ts`) and sent by OpenTelemetry's OTLP/HTTP
 * transport or dispatch's OTLP/gRPC one. Nothing is registered globally and no context manager is
 * installed; parents are passed explicitly. `env` decides whether traces are on, the protocol, the
 * sampler, the batch and the transport's settings; a bad one is logged and its default used.
 */
export function createTracing(env: NodeJS.ProcessEnv = process.env, logger?: Logger): Tracing {
  const enabled = tracesEnabled(env);
  const exporters = listOf(env.OTEL_TRACES_EXPORTER);
  const unsupported = exporters.filter((e) => e !== 'otlp' && e !== 'none');
  const switchedOff = exporters.includes('none') || env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true';
  if (unsupported.length > 0 && enabled) logger?.warn('unsupported OTEL_TRACES_EXPORTER values ignored', { exporters: unsupported });
  // Without `otlp` (`console` alone, say) nothing is exported: said, or the missing traces leave no clue.
  else if (unsupported.length > 0 && !switchedOff) logger?.warn('unsupported OTEL_TRACES_EXPORTER values; traces are off (only otlp is supported)', { exporters: unsupported });
  if (!enabled) return OFF;
  // Loaded once traces are on, not with the module: with the OTLP/HTTP transport (exporterFromEnv),
  // ~130 modules of OpenTelemetry's SDK that a dispatch exporting no traces never needs.
  const { samplerFromEnv } = require('./sampler-from-env') as typeof import('./sampler-from-env');
  const batcher = new SpanBatcher(requestFrame(serviceResource(), { name: 'dispatch' }), exporterFromEnv(env, logger), batchOptionsFromEnv(env), logger);
  let stopped: Promise<void> | undefined;
  return {
    tracer: createSpanTracer({ sampler: samplerFromEnv(env, logger), sink: batcher }),
    forceFlush: () => batcher.forceFlush(),
    lost: () => ({ dropped: batcher.dropped, failedBatches: batcher.failedBatches }),
    shutdown() {
      stopped ??= batcher.shutdown().catch((error: Error) => logger?.warn('trace export shutdown failed', { error: error.message }));
      return stopped;
    },
  };
}
