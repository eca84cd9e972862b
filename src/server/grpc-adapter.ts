import { create, fromBinary, toBinary, type DescMessage, type MessageShape } from '@bufbuild/protobuf';
import { anyPack } from '@bufbuild/protobuf/wkt';
import type { GenService, GenServiceMethods } from '@bufbuild/protobuf/codegenv2';
import * as grpc from '@grpc/grpc-js';
import { ErrorInfoSchema } from '../../gen/google/rpc/error_details_pb';
import { StatusSchema } from '../../gen/google/rpc/status_pb';
import { markMalformed } from './malformed-messages';
import { retryDelayOf, retryInfo } from './retry-info';
import { HardError } from '../errors';
import { idProblem } from '../parse/client-id';
import type { Logger } from '../log';

/**
 * What an error's google.rpc.ErrorInfo says besides its reason (docs/failures.md lists the keys):
 * `tool`, `tool_call_id`, `session_id`, `attempts`, `field`, `retry_after_ms`...; an undefined
 * value is left out.
 */
export type ErrorFacts = Readonly<Record<string, string | number | undefined>>;

/**
 * An RPC failure with a gRPC status, and a google.rpc.ErrorInfo reason (the status code's name,
 * e.g. INVALID_ARGUMENT, when none is given) with `facts` as its metadata. `retryDelayMs`: the
 * wait its google.rpc.RetryInfo asks for, over its reason's (see RETRY_DELAY_MS).
 */
export class RpcError extends Error {
  override readonly name = 'RpcError';
  constructor(
    readonly code: grpc.status,
    message: string,
    readonly reason?: string,
    readonly facts: ErrorFacts = {},
    readonly retryDelayMs?: number,
  ) {
    super(message);
  }
}

/** An INVALID_ARGUMENT naming the request's `field` (a path such as calls[2].id) in its ErrorInfo. */
export const invalidArgument = (field: string, message: string): RpcError => new RpcError(grpc.status.INVALID_ARGUMENT, message, 'INVALID_ARGUMENT', { field });

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
      const what = wellFormed(`not a valid ${typeName} (protobuf or UTF-8): ${detail}`);
      const message = `the request is ${what}`;
      return new UndecodableRequest(markMalformed({ code: grpc.status.INVALID_ARGUMENT, details: message, metadata: statusDetails(grpc.status.INVALID_ARGUMENT, message, 'MALFORMED_REQUEST', { message_type: typeName }) }, what));
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

/**
 * The longest metadata value an ErrorInfo carries, and the most UTF-8 bytes all of them take: the
 * status's trailers stay within the 8 KB of headers gRPC core accepts beside a message of
 * {@link MAX_MESSAGE_COST} (base64 makes 1,024 bytes 1,368).
 */
const MAX_FACT_CHARS = 256;
const MAX_FACTS_BYTES = 1_024;

/**
 * Trailers holding grpc-status-details-bin: a google.rpc.Status with one google.rpc.ErrorInfo,
 * domain dispatch.v1, `reason` (the code's name when none), and `facts` as its metadata (a value
 * over {@link MAX_FACT_CHARS}, or past {@link MAX_FACTS_BYTES} in all, left out: a session id or
 * tool name is shorter, a made-up one may not be); then a google.rpc.RetryInfo when waiting
 * mends the error (`retryDelayMs`, else its reason's delay: RETRY_DELAY_MS).
 */
export function statusDetails(code: grpc.status, message: string, reason: string | undefined, facts: ErrorFacts = {}, retryDelayMs?: number): grpc.Metadata {
  const metadata: Record<string, string> = {};
  let bytes = 0;
  for (const [key, value] of Object.entries(facts)) {
    const text = value === undefined ? '' : wellFormed(String(value));
    if (text === '' || text.length > MAX_FACT_CHARS) continue;
    const cost = key.length + Buffer.byteLength(text);
    if (bytes + cost > MAX_FACTS_BYTES) continue;
    bytes += cost;
    metadata[key] = text;
  }
  const info = create(ErrorInfoSchema, { reason: reason ?? grpc.status[code], domain: 'dispatch.v1', metadata });
  const delay = retryDelayOf(reason, retryDelayMs);
  const details = create(StatusSchema, { code, message, details: delay === undefined ? [anyPack(ErrorInfoSchema, info)] : [anyPack(ErrorInfoSchema, info), retryInfo(delay)] });
  const trailers = new grpc.Metadata();
  trailers.set('grpc-status-details-bin', Buffer.from(toBinary(StatusSchema, details)));
  return trailers;
}

/**
 * The status sent for anything a handler throws; unknown errors become INTERNAL, logged. `known`
 * (the request's session_id, say) is added to the error's own facts.
 */
export function toServiceError(error: unknown, logger: Logger, known: ErrorFacts = {}): Partial<grpc.StatusObject> {
  let code: grpc.status;
  let reason: string | undefined;
  let message: string;
  let facts: ErrorFacts = known;
  let retryDelayMs: number | undefined;
  if (error instanceof HardError || error instanceof RpcError) {
    code = error.code;
    reason = error.reason;
    message = error.message;
    // The error's own facts first (kept first within the bound), and over what the request says.
    facts = { ...error.facts, ...known, ...error.facts };
    if (error instanceof RpcError) retryDelayMs = error.retryDelayMs;
  } else {
    logger.error('internal error', { error: error instanceof Error ? error.stack : String(error) });
    code = grpc.status.INTERNAL;
    message = 'internal error in dispatch';
  }
  message = wellFormed(boundedMessage(message));
  return { code, details: message, metadata: statusDetails(code, message, reason, facts, retryDelayMs) };
}

/**
 * The most a status message may cost on the wire, in thirds of a byte: its grpc-message trailer
 * (percent-encoded UTF-8: an ASCII character 1 byte, any other byte 3) and its copy in
 * grpc-status-details-bin (base64: 4/3 of its UTF-8). 6,000 bytes stay within the 8 KB of
 * metadata that clients on gRPC's C core (Python, Ruby, C++) accept by default: ~2,500 ASCII
 * characters, ~460 CJK. Counted in UTF-16 units, a status of CJK or emoji text reached 18-24 KB,
 * and a Python client got RESOURCE_EXHAUSTED "received metadata size exceeds limit" instead.
 */
const MAX_MESSAGE_COST = 6_000 * 3;
/** Of it, the message's head and tail (the rest for the omission note). */
const HEAD_COST = MAX_MESSAGE_COST * 0.7;
const TAIL_COST = MAX_MESSAGE_COST * 0.25;

/** A UTF-16 unit's cost (see {@link MAX_MESSAGE_COST}): a surrogate is half of a 4-byte character. */
function unitCost(unit: number): number {
  if (unit < 0x80) return 7;
  if (unit < 0x800) return 26;
  return unit >= 0xd800 && unit <= 0xdfff ? 26 : 39;
}

const isLow = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;

/**
 * `message` cut to its head and tail around a note of what was left out, when it would cost more
 * than {@link MAX_MESSAGE_COST}; a surrogate pair is never split. A status travels in HTTP/2
 * trailers (grpc-message, and grpc-status-details-bin again): one over ~64 KB never reached the
 * client, which waited until its deadline, and stalled every other call on the connection with it.
 */
function boundedMessage(message: string): string {
  // An ASCII message this short fits whatever it holds.
  if (message.length * 39 <= MAX_MESSAGE_COST) return message;
  let cost = 0;
  let head = 0;
  for (; head < message.length && cost + unitCost(message.charCodeAt(head)) <= HEAD_COST; head++) cost += unitCost(message.charCodeAt(head));
  if (head === message.length) {
    for (let i = head; i < message.length; i++) cost += unitCost(message.charCodeAt(i));
    if (cost <= MAX_MESSAGE_COST) return message;
  }
  // Never between the two halves of a pair.
  if (head > 0 && isLow(message.charCodeAt(head))) head--;
  cost = 0;
  let from = message.length;
  while (from > head && cost + unitCost(message.charCodeAt(from - 1)) <= TAIL_COST) cost += unitCost(message.charCodeAt(--from));
  if (from < message.length && isLow(message.charCodeAt(from))) from++;
  if (from <= head) return message;
  return `${message.slice(0, head)} ... [${from - head} characters omitted] ... ${message.slice(from)}`;
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
      callback({ code: grpc.status.INTERNAL, details: 'internal error in dispatch', metadata: statusDetails(grpc.status.INTERNAL, 'internal error in dispatch', undefined) });
    } catch {
      // The call is beyond answering.
    }
  }
}

/**
 * What a request says that its error may repeat: the session it names, when it keeps the rule of
 * client ids. One refused for it (a control character, a bidirectional override, over 256
 * characters) is not echoed: backends log ErrorInfo's metadata, and a line break in it forged log
 * lines there.
 */
export function requestFacts(request: unknown): ErrorFacts {
  const sessionId = (request as { sessionId?: unknown } | null)?.sessionId;
  return typeof sessionId === 'string' && idProblem(sessionId, 'a session id') === undefined ? { session_id: sessionId } : {};
}

/** A unary handler from an async function, with errors mapped to statuses. */
export function unary<I, O>(logger: Logger, handler: (request: I, call: grpc.ServerUnaryCall<I, O>) => Promise<O>): grpc.handleUnaryCall<I, O> {
  return (call, callback) => {
    handler(call.request, call).then(
      (response) => answer(logger, callback, null, response),
      (error: unknown) => answer(logger, callback, toServiceError(error, logger, requestFacts(call.request))),
    );
  };
}

/** A handler for an RPC that a later version fills in. */
export function unimplemented(name: string): grpc.handleUnaryCall<unknown, unknown> {
  return (_call, callback) => callback({ code: grpc.status.UNIMPLEMENTED, details: `${name} is not implemented yet`, metadata: statusDetails(grpc.status.UNIMPLEMENTED, `${name} is not implemented yet`, undefined) });
}
