import { create, fromBinary, toBinary, type DescMessage, type MessageShape } from '@bufbuild/protobuf';
import { anyPack } from '@bufbuild/protobuf/wkt';
import type { GenService, GenServiceMethods } from '@bufbuild/protobuf/codegenv2';
import * as grpc from '@grpc/grpc-js';
import { ErrorInfoSchema } from '../../gen/google/rpc/error_details_pb';
import { StatusSchema } from '../../gen/google/rpc/status_pb';
import { HardError } from '../errors';
import type { Logger } from '../log';
import { cutUnits } from '../pipeline/bound-result';

/** An RPC failure with a gRPC status, and optionally a google.rpc.ErrorInfo reason. */
export class RpcError extends Error {
  override readonly name = 'RpcError';
  constructor(
    readonly code: grpc.status,
    message: string,
    readonly reason?: string,
  ) {
    super(message);
  }
}

/**
 * A method's own codec, in place of protobuf-es's reflective one, for any of the four ends: the
 * server's (decodeRequest, encodeResponse) and the client's (encodeRequest, decodeResponse).
 */
export interface HotCodec {
  readonly decodeRequest?: (bytes: Buffer) => unknown;
  readonly encodeResponse?: (value: never) => Buffer;
  readonly encodeRequest?: (value: never) => Buffer;
  readonly decodeResponse?: (bytes: Buffer) => unknown;
}

/**
 * The grpc-js service definition of a protobuf-es service: paths, streaming flags, and binary
 * (de)serialisation through the generated schemas. This is the one adapter between the two.
 * `codecs` replace toBinary and fromBinary for the named methods, at either end (a hot path's own
 * encoder and decoder).
 */
export function serviceDefinition(service: GenService<GenServiceMethods>, codecs: Readonly<Record<string, HotCodec>> = {}): grpc.ServiceDefinition {
  const definition: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  for (const method of service.methods) {
    const input = method.input as DescMessage;
    const output = method.output as DescMessage;
    definition[method.localName] = {
      path: `/${service.typeName}/${method.name}`,
      requestStream: method.methodKind === 'client_streaming' || method.methodKind === 'bidi_streaming',
      responseStream: method.methodKind === 'server_streaming' || method.methodKind === 'bidi_streaming',
      requestSerialize: (codecs[method.localName]?.encodeRequest as ((value: unknown) => Buffer) | undefined) ?? ((value) => Buffer.from(toBinary(input, value as MessageShape<DescMessage>))),
      requestDeserialize: refusable(codecs[method.localName]?.decodeRequest ?? ((bytes) => fromBinary(input, bytes)), input.typeName),
      responseSerialize: (codecs[method.localName]?.encodeResponse as ((value: unknown) => Buffer) | undefined) ?? ((value) => Buffer.from(toBinary(output, value as MessageShape<DescMessage>))),
      responseDeserialize: codecs[method.localName]?.decodeResponse ?? ((bytes) => fromBinary(output, bytes)),
      originalName: method.name,
    };
  }
  return definition;
}

/** A request its method's deserializer threw on, and the status it is answered with. */
class UndecodableRequest {
  constructor(readonly status: Partial<grpc.StatusObject>) {}
}

/**
 * `decode`, returning an {@link UndecodableRequest} where it throws: grpc-js answers a throwing
 * deserializer INTERNAL ("Error deserializing request"), a fault of dispatch's to the client,
 * for what is the client's (malformed protobuf, invalid UTF-8 in a string field).
 */
function refusable(decode: (bytes: Buffer) => unknown, typeName: string): (bytes: Buffer) => unknown {
  return (bytes) => {
    try {
      return decode(bytes);
    } catch (error) {
      const detail = (error instanceof Error ? error.message : String(error)).slice(0, 200);
      return new UndecodableRequest({ code: grpc.status.INVALID_ARGUMENT, details: wellFormed(`the request is not a valid ${typeName} (protobuf or UTF-8): ${detail}`) });
    }
  };
}

type AnyCall = grpc.ServerUnaryCall<unknown, unknown> & grpc.ServerDuplexStream<unknown, unknown>;
type AnyHandler = (call: AnyCall, callback?: grpc.sendUnaryData<unknown>) => void;

/** Answers `call` with `status`: through the callback of a unary or client-streaming call, else as the stream's error. */
function refuse(call: AnyCall, callback: grpc.sendUnaryData<unknown> | undefined, status: Partial<grpc.StatusObject>): void {
  if (callback) callback(status);
  else call.emit('error', status);
}

/** `handler`, with an undecodable request answered INVALID_ARGUMENT before it runs. */
function refusing(handler: AnyHandler, requestStream: boolean): AnyHandler {
  if (!requestStream) return (call, callback) => (call.request instanceof UndecodableRequest ? refuse(call, callback, call.request.status) : handler(call, callback));
  // A stream's messages reach its handler through push(): the first undecodable one ends the
  // call, and none after it reaches the handler.
  return (call, callback) => {
    const push = call.push;
    call.push = (chunk: unknown, encoding?: BufferEncoding) => {
      if (!(chunk instanceof UndecodableRequest)) return push.call(call, chunk, encoding);
      call.push = () => false;
      refuse(call, callback, chunk.status);
      return false;
    };
    handler(call, callback);
  };
}

/**
 * Adds a service whose definition came from {@link serviceDefinition} to `server`, each handler
 * answering a request its deserializer could not read INVALID_ARGUMENT, naming the message.
 */
export function addService(server: grpc.Server, definition: grpc.ServiceDefinition, implementation: grpc.UntypedServiceImplementation): void {
  const guarded: grpc.UntypedServiceImplementation = {};
  for (const [name, handler] of Object.entries(implementation)) {
    const method = definition[name];
    guarded[name] = method ? (refusing(handler as AnyHandler, method.requestStream) as grpc.UntypedHandleCall) : handler;
  }
  server.addService(definition, guarded);
}

/** The status sent for anything a handler throws; unknown errors become INTERNAL, logged. */
export function toServiceError(error: unknown, logger: Logger): Partial<grpc.StatusObject> {
  let code: grpc.status;
  let reason: string | undefined;
  let message: string;
  if (error instanceof HardError || error instanceof RpcError) {
    code = error.code;
    reason = error.reason;
    message = error.message;
  } else {
    logger.error('internal error', { error: error instanceof Error ? error.stack : String(error) });
    code = grpc.status.INTERNAL;
    message = 'internal error in dispatch';
  }
  message = wellFormed(boundedMessage(message));
  const metadata = new grpc.Metadata();
  if (reason) {
    const info = create(ErrorInfoSchema, { reason, domain: 'dispatch.v1' });
    const details = create(StatusSchema, { code, message, details: [anyPack(ErrorInfoSchema, info)] });
    metadata.set('grpc-status-details-bin', Buffer.from(toBinary(StatusSchema, details)));
  }
  return { code, details: message, metadata };
}

/**
 * The longest status message, in UTF-16 units (with its omission note): in ASCII ~5 KB of
 * trailers with its copy in grpc-status-details-bin, within the 8 KB of metadata that clients on
 * gRPC's C core (Python, Ruby, C++) accept by default.
 */
const MAX_MESSAGE_UNITS = 2_000;
const HEAD_UNITS = 1_400;
const TAIL_UNITS = 500;

/**
 * `message` cut to its head and tail around a note of what was left out, when longer than
 * {@link MAX_MESSAGE_UNITS}; a surrogate pair is never split. A status travels in HTTP/2 trailers
 * (grpc-message, and grpc-status-details-bin again): one over ~64 KB never reached the client,
 * which waited until its deadline, and stalled every other call on the connection with it.
 */
function boundedMessage(message: string): string {
  if (message.length <= MAX_MESSAGE_UNITS) return message;
  const head = cutUnits(message, HEAD_UNITS);
  let from = message.length - TAIL_UNITS;
  const unit = message.charCodeAt(from);
  if (unit >= 0xdc00 && unit <= 0xdfff && (message.charCodeAt(from - 1) & 0xfc00) === 0xd800) from++;
  const tail = message.slice(from);
  return `${head} ... [${message.length - head.length - tail.length} characters omitted] ... ${tail}`;
}

/** Lone UTF-16 surrogates: a message cut through a pair (a model's emoji at the cut) has one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');

/**
 * `text` with each lone surrogate replaced by U+FFFD. grpc-js sends a status's details through
 * encodeURI(), which throws on a lone surrogate: thrown inside a handler's callback, that ended
 * the process (an unhandled rejection).
 */
export function wellFormed(text: string): string {
  return LONE_SURROGATE.test(text) ? text.replace(LONE_SURROGATES, '\uFFFD') : text;
}

/** Answers a unary call; if grpc-js throws sending the answer, the call ends INTERNAL and the process goes on. */
function answer<O>(logger: Logger, callback: grpc.sendUnaryData<O>, error: Partial<grpc.StatusObject> | null, response?: O): void {
  try {
    callback(error, response);
  } catch (thrown) {
    logger.error('answering a call failed', { error: thrown instanceof Error ? thrown.message : String(thrown) });
    try {
      callback({ code: grpc.status.INTERNAL, details: 'internal error in dispatch' });
    } catch {
      // The call is beyond answering.
    }
  }
}

/** A unary handler from an async function, with errors mapped to statuses. */
export function unary<I, O>(logger: Logger, handler: (request: I, call: grpc.ServerUnaryCall<I, O>) => Promise<O>): grpc.handleUnaryCall<I, O> {
  return (call, callback) => {
    handler(call.request, call).then(
      (response) => answer(logger, callback, null, response),
      (error: unknown) => answer(logger, callback, toServiceError(error, logger)),
    );
  };
}

/** A handler for an RPC that a later version fills in. */
export function unimplemented(name: string): grpc.handleUnaryCall<unknown, unknown> {
  return (_call, callback) => callback({ code: grpc.status.UNIMPLEMENTED, details: `${name} is not implemented yet` });
}
