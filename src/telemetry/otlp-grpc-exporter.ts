import { setTimeout as sleep } from 'node:timers/promises';
import * as grpc from '@grpc/grpc-js';
import type { Logger } from '../log';
import { readOtlpTlsFiles } from './otlp-env';
import type { OtlpGrpcOptions } from './otlp-grpc-options';
import type { BatchExporter, EncodedBatch } from './span-batcher';

/** The OTLP trace service's one method. */
export const TRACE_EXPORT_PATH = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';

/**
 * The codes the OTLP specification calls retryable. RESOURCE_EXHAUSTED is retryable only with
 * RetryInfo, which grpc-js does not surface, so it is not retried.
 */
const RETRYABLE = new Set([grpc.status.CANCELLED, grpc.status.DEADLINE_EXCEEDED, grpc.status.ABORTED, grpc.status.OUT_OF_RANGE, grpc.status.UNAVAILABLE, grpc.status.DATA_LOSS]);

/**
 * The retries of OpenTelemetry's RetryingTransport, which the OTLP/HTTP exporter sends through:
 * up to 5 after the first attempt, the wait starting at 1 s and growing 1.5x to at most 5 s, ±20 %
 * jitter, and none that would start past the export's deadline.
 */
const RETRY = { maxRetries: 5, initialBackoffMs: 1_000, maxBackoffMs: 5_000, multiplier: 1.5, jitter: 0.2 } as const;

const identity = (bytes: Buffer) => bytes;
const asBuffer = (bytes: Uint8Array) => (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));

/** TLS as the HTTP exporter sets it up from the same variables (`readOtlpTlsFiles`). */
function credentialsOf(options: OtlpGrpcOptions, logger?: Logger): grpc.ChannelCredentials {
  if (!options.secure) return grpc.credentials.createInsecure();
  const { ca, key, cert } = readOtlpTlsFiles(options, logger);
  return grpc.credentials.createSsl(ca, key, cert);
}

function metadataOf(headers: Readonly<Record<string, string>>, logger?: Logger): grpc.Metadata {
  const metadata = new grpc.Metadata();
  for (const [key, value] of Object.entries(headers)) {
    try {
      metadata.set(key.toLowerCase(), value);
    } catch (error) {
      logger?.warn('trace export: a header cannot be gRPC metadata; left out', { header: key, error: (error as Error).message });
    }
  }
  return metadata;
}

/**
 * OTLP/gRPC for encoded batches: each batch's ExportTraceServiceRequest bytes go as they are in
 * the unary call TraceService/Export, on one channel made here and closed by `shutdown`. The
 * channel, metadata, deadline (`timeoutMs`, for the export with its retries) and compression come
 * from {@link OtlpGrpcOptions}. A retryable status is retried as the OTLP/HTTP exporter retries,
 * until `stopRetrying` (at shutdown); any other failure, or the last retryable one, rejects the
 * export, which the batcher counts and logs as it does HTTP failures.
 */
export function otlpGrpcExporter(options: OtlpGrpcOptions, logger?: Logger): BatchExporter {
  const channelOptions: grpc.ChannelOptions = options.compression === 'gzip' ? { 'grpc.default_compression_algorithm': grpc.compressionAlgorithms.gzip } : {};
  const credentials = credentialsOf(options, logger);
  let client = new grpc.Client(options.address, credentials, channelOptions);
  const metadata = metadataOf(options.headers, logger);

  // Set by stopRetrying: exports are tried once, and a retry being waited for is given up.
  const stopping = new AbortController();
  const call = (request: Buffer, deadline: number) =>
    new Promise<grpc.ServiceError | null>((done) => {
      const used = client;
      used.makeUnaryRequest(TRACE_EXPORT_PATH, identity, identity, request, metadata.clone(), { deadline }, (error) => {
        // No answer by the deadline: the connection may be half-open (a collector gone without
        // closing it), which a channel keeps until the kernel gives up, ~15 minutes. Later exports
        // go on a new channel. (Keep-alive pings would find it too, but a collector on grpc-go
        // answers pings more often than every 5 minutes with GOAWAY by default.)
        if (error?.code === grpc.status.DEADLINE_EXCEEDED && !stopping.signal.aborted && client === used) {
          used.close();
          client = new grpc.Client(options.address, credentials, channelOptions);
        }
        done(error);
      });
    });

  return {
    async export(batch: EncodedBatch) {
      const request = asBuffer(batch.bytes);
      const deadline = Date.now() + options.timeoutMs;
      let backoff: number = RETRY.initialBackoffMs;
      for (let retries = 0; ; retries++) {
        const error = await call(request, deadline);
        if (error === null) return;
        if (!RETRYABLE.has(error.code) || retries === RETRY.maxRetries || stopping.signal.aborted) throw error;
        const wait = Math.min(backoff * (1 + (Math.random() * 2 - 1) * RETRY.jitter), RETRY.maxBackoffMs);
        backoff *= RETRY.multiplier;
        if (wait > deadline - Date.now()) throw error;
        const waited = await sleep(wait, true, { signal: stopping.signal }).catch(() => false);
        if (!waited) throw error;
      }
    },
    stopRetrying() {
      stopping.abort();
    },
    async shutdown() {
      stopping.abort();
      client.close();
    },
  };
}
