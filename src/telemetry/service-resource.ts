import type { Resource } from '@opentelemetry/resources';

/** service.name when OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES name none. */
export const DEFAULT_SERVICE_NAME = 'dispatchd';

/**
 * The resource traces and metrics describe the process with: the SDK's defaults, service.name
 * {@link DEFAULT_SERVICE_NAME}, then OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME over them. One
 * for both, so that a dashboard joins Prometheus' target_info with the traces by service name
 * (metrics said unknown_service:node). Loaded when asked: a dispatch with neither needs none of it.
 */
export function serviceResource(): Resource {
  const { defaultResource, detectResources, envDetector, resourceFromAttributes } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  return defaultResource()
    .merge(resourceFromAttributes({ 'service.name': DEFAULT_SERVICE_NAME }))
    .merge(detectResources({ detectors: [envDetector] }));
}
