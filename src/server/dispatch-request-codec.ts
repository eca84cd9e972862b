import { type DispatchMode, type DispatchRequest, type ToolCall } from '../../gen/dispatch/v1/dispatch_pb';
import { Reader } from '../wire/reader';

// The one message dispatch reads per Dispatch RPC, decoded by hand: protobuf-es's reflective
// fromBinary cost a bare echo server ~15% more CPU per call when put in front of it (a decoder
// like this one: ~2%), several times what it measures alone. The same objects as fromBinary
// makes, but for unknown fields, which are skipped instead of kept in `$unknown` (requests are
// never encoded again). Like fromBinary, a known field is read as its type whatever wire type its
// tag says; but it refuses a call whose unknown field runs past the call's end, which fromBinary
// bounds by the whole request only. Field numbers are those of proto/dispatch/v1/dispatch.proto;
// test/unit/dispatch-request-codec.test.ts checks against fromBinary for arbitrary messages
// (with unknown fields) and arbitrary bytes, so a field added to the proto and not here fails CI.

/** Field numbers. */
const FIELD = {
  sessionId: 1,
  turn: 2,
  calls: 3,
  mode: 4,
  maxConcurrency: 5,
  offeredTools: 6,
  interactive: 7,
  callId: 1,
  callName: 2,
  callArguments: 3,
} as const;

/** Reads a length-delimited ToolCall, into `out` when given (a message field sent twice merges, as in fromBinary). */
export function readCall(reader: Reader, out: ToolCall = { $typeName: 'dispatch.v1.ToolCall', id: '', name: '', arguments: '' }): ToolCall {
  const fields = reader.nested();
  while (fields.pos < fields.end) {
    const tag = fields.tag();
    switch (tag >>> 3) {
      case FIELD.callId:
        out.id = fields.string();
        break;
      case FIELD.callName:
        out.name = fields.string();
        break;
      case FIELD.callArguments:
        out.arguments = fields.string();
        break;
      default:
        fields.skip(tag);
    }
  }
  return out;
}

/** Decodes a DispatchRequest as fromBinary(DispatchRequestSchema, bytes) does; throws on malformed bytes. */
export function decodeDispatchRequest(bytes: Buffer): DispatchRequest {
  const reader = new Reader(bytes);
  const out: DispatchRequest = {
    $typeName: 'dispatch.v1.DispatchRequest',
    sessionId: '',
    turn: 0,
    calls: [],
    mode: 0 as DispatchMode,
    maxConcurrency: 0,
    offeredTools: [],
    interactive: false,
  };
  while (reader.pos < reader.end) {
    const tag = reader.tag();
    switch (tag >>> 3) {
      case FIELD.sessionId:
        out.sessionId = reader.string();
        break;
      case FIELD.turn:
        out.turn = reader.varint32();
        break;
      case FIELD.calls:
        out.calls.push(readCall(reader));
        break;
      case FIELD.mode:
        out.mode = (reader.varint32() | 0) as DispatchMode;
        break;
      case FIELD.maxConcurrency:
        out.maxConcurrency = reader.varint32();
        break;
      case FIELD.offeredTools:
        out.offeredTools.push(reader.string());
        break;
      case FIELD.interactive:
        out.interactive = reader.bool();
        break;
      default:
        reader.skip(tag);
    }
  }
  return out;
}
