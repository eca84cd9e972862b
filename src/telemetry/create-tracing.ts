import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { SpanTracer } from '../events/span-record';
import type { Logger } from '../log';
import { samplerFromEnv } from './sampler-from-env';
import { createSpanTracer } from './span-tracer';

/** Trace export, when the environment asks for it. */
export interface Tracing {
  /** Undefined when traces are off. */
  readonly tracer: SpanTracer | undefined;
  /** Exports every finished span now. */
  forceFlush(): Promise<void>;
  /** Flushes, then stops exporting. */
  shutdown(): Promise<void>;
}

/** The service name spans carry unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES say otherwise. */
export const DEFAULT_SERVICE_NAME = 'dispatchd';

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

const OFF: Tracing = { tracer: undefined, forceFlush: async () => undefined, shutdown: async () => undefined };

/**
 * OTLP trace export (protobuf over HTTP) with OpenTelemetry's batch span processor and exporter,
 * configured by the standard OTEL_* variables (endpoint, headers, timeout, sampler, batch sizes).
 * Spans are made by dispatch's own tracer (`span-tracer.ts`), not the SDK's: nothing is
 * registered globally and no context manager is installed; parents are passed explicitly.
 */
export function createTracing(env: NodeJS.ProcessEnv = process.env, logger?: Logger): Tracing {
  if (!tracesEnabled(env)) return OFF;
  const exporters = listOf(env.OTEL_TRACES_EXPORTER).filter((e) => e !== 'otlp');
  if (exporters.length > 0) logger?.warn('unsupported OTEL_TRACES_EXPORTER values ignored', { exporters });
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL;
  if (protocol !== undefined && protocol.trim() !== 'http/protobuf') logger?.warn('only the http/protobuf OTLP protocol is supported; using it', { protocol });
  const resource = defaultResource()
    .merge(resourceFromAttributes({ 'service.name': DEFAULT_SERVICE_NAME }))
    .merge(detectResources({ detectors: [envDetector] }));
  const processor = new BatchSpanProcessor(new OTLPTraceExporter());
  let stopped: Promise<void> | undefined;
  return {
    tracer: createSpanTracer({ sampler: samplerFromEnv(env, logger), processor, resource, scope: { name: 'dispatch' } }),
    forceFlush: () => processor.forceFlush(),
    shutdown() {
      stopped ??= processor.shutdown().catch((error: Error) => logger?.warn('trace export shutdown failed', { error: error.message }));
      return stopped;
    },
  };
}
