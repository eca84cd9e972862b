import { createServer, type Http2Server, type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { TRACE_EXPORT_PATH } from '../../src/telemetry/otlp-grpc-exporter';
import { eventually } from '../workers/worker-harness';
import { decodeExportTraceRequest, type ReceivedSpan } from './otlp-receiver';

const identity = (bytes: Buffer) => bytes;

/** TraceService/Export with raw bytes both ways: the receiver decodes the request itself. */
const TRACE_SERVICE: grpc.ServiceDefinition = {
  Export: { path: TRACE_EXPORT_PATH, requestStream: false, responseStream: false, requestSerialize: identity, requestDeserialize: identity, responseSerialize: identity, responseDeserialize: identity },
};

/** A real OTLP/gRPC trace receiver (grpc-js) on loopback, decoding the protobuf requests. */
export interface OtlpGrpcReceiver {
  /** `http://127.0.0.1:{port}`, or `https://localhost:{port}` with TLS. */
  readonly endpoint: string;
  readonly spans: ReceivedSpan[];
  /** The metadata of every Export call, answered or refused. */
  readonly metadata: grpc.Metadata[];
  /** The request bytes of every Export call, as received. */
  readonly requests: Buffer[];
  /** The status Export answers with; OK (the default) accepts and decodes the spans. */
  answer: grpc.status;
  /** Resolves once `predicate` holds, or rejects after `timeoutMs`. */
  waitFor(predicate: (receiver: OtlpGrpcReceiver) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** Starts the receiver on 127.0.0.1 port 0, with TLS (as `localhost`) when given a certificate for localhost and its key. */
export async function startOtlpGrpcReceiver(tls?: { cert: Buffer; key: Buffer }): Promise<OtlpGrpcReceiver> {
  const server = new grpc.Server();
  server.addService(TRACE_SERVICE, {
    Export(call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) {
      receiver.metadata.push(call.metadata);
      receiver.requests.push(call.request);
      if (receiver.answer !== grpc.status.OK) return callback({ code: receiver.answer, details: 'receiver refuses' });
      receiver.spans.push(...decodeExportTraceRequest(call.request));
      callback(null, Buffer.alloc(0)); // an empty ExportTraceServiceResponse: all accepted
    },
  });
  const credentials = tls ? grpc.ServerCredentials.createSsl(null, [{ cert_chain: tls.cert, private_key: tls.key }]) : grpc.ServerCredentials.createInsecure();
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', credentials, (error, p) => (error ? reject(error) : resolve(p))));
  const receiver: OtlpGrpcReceiver = {
    endpoint: tls ? `https://localhost:${port}` : `http://127.0.0.1:${port}`,
    spans: [],
    metadata: [],
    requests: [],
    answer: grpc.status.OK,
    waitFor: (predicate, timeoutMs = 10_000) => eventually(() => predicate(receiver), timeoutMs, 'the OTLP/gRPC receiver'),
    async close() {
      server.forceShutdown();
    },
  };
  return receiver;
}

/** A bare HTTP/2 gRPC endpoint that answers every call OK and keeps each request's headers and framed body. */
export async function startRawGrpcEndpoint(): Promise<{ endpoint: string; received: { headers: IncomingHttpHeaders; body: Buffer }[]; close(): Promise<void> }> {
  const received: { headers: IncomingHttpHeaders; body: Buffer }[] = [];
  const server: Http2Server = createServer();
  server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      received.push({ headers, body: Buffer.concat(chunks) });
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      stream.end(Buffer.alloc(5)); // an uncompressed, empty ExportTraceServiceResponse
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
