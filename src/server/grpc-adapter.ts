import { create, fromBinary, toBinary, type DescMessage, type MessageShape } from '@bufbuild/protobuf';
import { anyPack } from '@bufbuild/protobuf/wkt';
import type { GenService, GenServiceMethods } from '@bufbuild/protobuf/codegenv2';
import * as grpc from '@grpc/grpc-js';
import { ErrorInfoSchema } from '../../gen/google/rpc/error_details_pb';
import { StatusSchema } from '../../gen/google/rpc/status_pb';
import { HardError } from '../errors';
import type { Logger } from '../log';

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
      requestDeserialize: codecs[method.localName]?.decodeRequest ?? ((bytes) => fromBinary(input, bytes)),
      responseSerialize: (codecs[method.localName]?.encodeResponse as ((value: unknown) => Buffer) | undefined) ?? ((value) => Buffer.from(toBinary(output, value as MessageShape<DescMessage>))),
      responseDeserialize: codecs[method.localName]?.decodeResponse ?? ((bytes) => fromBinary(output, bytes)),
      originalName: method.name,
    };
  }
  return definition;
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
  const metadata = new grpc.Metadata();
  if (reason) {
    const info = create(ErrorInfoSchema, { reason, domain: 'dispatch.v1' });
    const details = create(StatusSchema, { code, message, details: [anyPack(ErrorInfoSchema, info)] });
    metadata.set('grpc-status-details-bin', Buffer.from(toBinary(StatusSchema, details)));
  }
  return { code, details: wellFormed(message), metadata };
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
