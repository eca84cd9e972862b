import type { DescMessage, MessageInitShape, MessageShape } from '@bufbuild/protobuf';
import { create } from '@bufbuild/protobuf';
import type { GenService, GenServiceMethods } from '@bufbuild/protobuf/codegenv2';
import * as grpc from '@grpc/grpc-js';
import { DispatchService } from '../../gen/dispatch/v1/dispatch_pb';
import { ToolRegistryService } from '../../gen/dispatch/v1/registry_pb';
import { WorkerService, type WorkerMessage } from '../../gen/dispatch/v1/worker_pb';
import { guardClientPings } from '../server/closing-pings';
import { serviceDefinition, type HotCodec } from '../server/grpc-adapter';
import { decodeWorkAssignment } from '../server/work-assignment-codec';
import { encodeWorkerMessage } from '../server/worker-message-codec';

type Methods<S extends GenServiceMethods> = {
  [K in keyof S]: S[K] extends { methodKind: 'unary'; input: infer I extends DescMessage; output: infer O extends DescMessage }
    ? (request: MessageInitShape<I>, options?: CallOptions) => Promise<MessageShape<O>>
    : S[K] extends { methodKind: 'server_streaming'; input: infer I extends DescMessage }
      ? (request: MessageInitShape<I>, options?: CallOptions) => grpc.ClientReadableStream<unknown>
      : (options?: CallOptions) => grpc.ClientDuplexStream<unknown, unknown>;
};

/**
 * Per-call options: metadata (a bearer token, a traceparent), a deadline, a cancel signal. The
 * signal cancels unary calls and streams alike: a stream then ends with CANCELLED.
 */
export interface CallOptions {
  readonly metadata?: Record<string, string>;
  /**
   * The call's deadline, in milliseconds from now; absent or 0, none: the call then waits as long
   * as the server takes (a turn's tools, an approval), so an agent sets one (the examples: 60 s
   * for Dispatch, gRPC's retries included). Past it the call ends DEADLINE_EXCEEDED.
   */
  readonly deadlineMs?: number;
  readonly signal?: AbortSignal;
  /** Told the response headers of a unary call (GetToolStats's `dispatch-stats-warning`, say). */
  readonly onHeaders?: (metadata: grpc.Metadata) => void;
}

/** A promise-based client of a dispatch.v1 service, with the raw grpc-js client alongside. */
export type ServiceClient<S extends GenServiceMethods> = Methods<S> & { readonly raw: grpc.Client; close(): void };

function toMetadata(options?: CallOptions): grpc.Metadata {
  const metadata = new grpc.Metadata();
  for (const [k, v] of Object.entries(options?.metadata ?? {})) metadata.set(k, v);
  return metadata;
}

/**
 * Cancels `call` when `signal` aborts (at once when it already has). The listener is removed when
 * the call ends ('status', which grpc-js emits for every ending), so a signal shared by many calls
 * holds neither a listener nor a call per call.
 */
function cancelOnAbort(call: grpc.Call, signal: AbortSignal | undefined): void {
  if (signal === undefined) return;
  if (signal.aborted) {
    call.cancel();
    return;
  }
  const cancel = () => call.cancel();
  signal.addEventListener('abort', cancel, { once: true });
  call.once('status', () => signal.removeEventListener('abort', cancel));
}

/**
 * Channel options that ping the server while a call is open (every 30 s, 10 s to answer): a call
 * or stream on a connection whose server vanished without closing it (half-open) then fails
 * UNAVAILABLE in ~40 s instead of at its deadline, or never (a worker's Work stream). grpc-js
 * (1.14) drops a connection whose ping fails, and Node fails every ping once the server has sent
 * GOAWAY (grpc/grpc-node#3068), which ended the calls still running while dispatchd shut down
 * gracefully: a channel that pings therefore has its closing connections' pings answered locally
 * (guardClientPings, process-wide). Part of DEFAULT_CHANNEL_OPTIONS; `'grpc.keepalive_time_ms': 0`
 * turns the pings off.
 */
export const KEEPALIVE_CHANNEL_OPTIONS: grpc.ChannelOptions = Object.freeze({ 'grpc.keepalive_time_ms': 30_000, 'grpc.keepalive_timeout_ms': 10_000 });

/** The channel options every client starts from: 64 MiB messages, and KEEPALIVE_CHANNEL_OPTIONS. */
export const DEFAULT_CHANNEL_OPTIONS: grpc.ChannelOptions = Object.freeze({ 'grpc.max_receive_message_length': 64 * 1024 * 1024, ...KEEPALIVE_CHANNEL_OPTIONS });

/** Creates a client for `service` at `address` (insecure credentials unless given); `codecs` as in serviceDefinition. */
export function createServiceClient<S extends GenServiceMethods>(service: GenService<S>, address: string, credentials = grpc.credentials.createInsecure(), channelOptions: grpc.ChannelOptions = {}, codecs: Readonly<Record<string, HotCodec>> = {}): ServiceClient<S> {
  const Ctor = grpc.makeGenericClientConstructor(serviceDefinition(service as GenService<GenServiceMethods>, codecs), service.typeName);
  const options = { ...DEFAULT_CHANNEL_OPTIONS, ...channelOptions };
  if (Number(options['grpc.keepalive_time_ms']) > 0) guardClientPings();
  const raw = new Ctor(address, credentials, options) as unknown as Record<string, (...args: unknown[]) => unknown> & grpc.Client;
  const client: Record<string, unknown> = { raw, close: () => raw.close() };
  for (const method of service.methods) {
    const name = method.localName;
    const callOptions = (o?: CallOptions): grpc.CallOptions => (o?.deadlineMs ? { deadline: Date.now() + o.deadlineMs } : {});
    if (method.methodKind === 'unary') {
      client[name] = (request: object, options?: CallOptions) =>
        new Promise((resolve, reject) => {
          const call = raw[name]!.call(raw, create(method.input, request as MessageInitShape<DescMessage>), toMetadata(options), callOptions(options), (error: unknown, response: unknown) => {
            if (error) reject(error);
            else resolve(response);
          }) as grpc.ClientUnaryCall;
          if (options?.onHeaders) call.on('metadata', options.onHeaders);
          cancelOnAbort(call, options?.signal);
        });
    } else if (method.methodKind === 'server_streaming') {
      client[name] = (request: object, options?: CallOptions) => {
        const stream = raw[name]!.call(raw, create(method.input, request as MessageInitShape<DescMessage>), toMetadata(options), callOptions(options)) as grpc.ClientReadableStream<unknown>;
        cancelOnAbort(stream, options?.signal);
        return stream;
      };
    } else {
      client[name] = (options?: CallOptions) => {
        const stream = raw[name]!.call(raw, toMetadata(options), callOptions(options)) as grpc.ClientDuplexStream<unknown, unknown>;
        cancelOnAbort(stream, options?.signal);
        return stream;
      };
    }
  }
  return client as ServiceClient<S>;
}

/**
 * Clients of the three dispatch.v1 services. `channelOptions` go over DEFAULT_CHANNEL_OPTIONS: a
 * retry policy (`'grpc.service_config'`, as examples/typescript/backend.ts sets), a receive limit.
 */
export const createDispatchClient = (address: string, credentials?: grpc.ChannelCredentials, channelOptions: grpc.ChannelOptions = {}) => createServiceClient(DispatchService, address, credentials, channelOptions);
export const createRegistryClient = (address: string, credentials?: grpc.ChannelCredentials, channelOptions: grpc.ChannelOptions = {}) => createServiceClient(ToolRegistryService, address, credentials, channelOptions);
/**
 * A worker's end of the Work stream: its messages encoded and its assignments decoded by hand. A
 * hello that does not say max_receive_message_bytes is sent saying the channel's receive limit (64
 * MiB unless `channelOptions` set another; grpc-js's -1, none, as the largest uint32), so dispatch
 * sends the worker any assignment it can read, and refuses before sending one it could not (past
 * its receive limit, grpc-js would end the stream).
 */
export function createWorkerClient(address: string, credentials?: grpc.ChannelCredentials, channelOptions: grpc.ChannelOptions = {}) {
  const limit = Number({ ...DEFAULT_CHANNEL_OPTIONS, ...channelOptions }['grpc.max_receive_message_length']);
  const said = !Number.isInteger(limit) ? 0 : limit < 0 || limit > 0xffff_ffff ? 0xffff_ffff : limit;
  const encodeRequest = (message: WorkerMessage): Buffer => {
    const { msg } = message;
    if (msg.case !== 'hello' || msg.value.maxReceiveMessageBytes !== 0) return encodeWorkerMessage(message);
    return encodeWorkerMessage({ ...message, msg: { case: 'hello', value: { ...msg.value, maxReceiveMessageBytes: said } } });
  };
  return createServiceClient(WorkerService, address, credentials, channelOptions, { work: { encodeRequest, decodeResponse: decodeWorkAssignment } });
}
