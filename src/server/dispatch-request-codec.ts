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

/** Offered tool names one request may carry (besides max_message_bytes). */
export const MAX_OFFERED_TOOLS = 10_000;

/** What a request held past the bounds it was decoded with, counted but not decoded. */
const counted = new WeakMap<DispatchRequest, { calls: number; offeredTools: number }>();

/** How many calls and offered tools the request held, also those past its decoding bounds. */
export function sentCounts(request: DispatchRequest): { calls: number; offeredTools: number } {
  return counted.get(request) ?? { calls: request.calls.length, offeredTools: request.offeredTools.length };
}

/**
 * Decodes a DispatchRequest as fromBinary(DispatchRequestSchema, bytes) does; throws on malformed
 * bytes. Past `maxCalls` calls (and MAX_OFFERED_TOOLS names) the rest are counted and skipped, not
 * decoded: 4 MiB of empty calls were two million objects (~1 s of CPU and 166 MiB) before any
 * check, for a request refused anyway (`sentCounts` gives the numbers for its message).
 */
export function decodeDispatchRequest(bytes: Buffer, maxCalls = Infinity): DispatchRequest {
  const reader = new Reader(bytes);
  let extraCalls = 0;
  let extraTools = 0;
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
        if (out.calls.length <= maxCalls) out.calls.push(readCall(reader));
        else {
          reader.skip(tag);
          extraCalls++;
        }
        break;
      case FIELD.mode:
        out.mode = (reader.varint32() | 0) as DispatchMode;
        break;
      case FIELD.maxConcurrency:
        out.maxConcurrency = reader.varint32();
        break;
      case FIELD.offeredTools:
        if (out.offeredTools.length <= MAX_OFFERED_TOOLS) out.offeredTools.push(reader.string());
        else {
          reader.skip(tag);
          extraTools++;
        }
        break;
      case FIELD.interactive:
        out.interactive = reader.bool();
        break;
      default:
        reader.skip(tag);
    }
  }
  if (extraCalls > 0 || extraTools > 0) counted.set(out, { calls: out.calls.length + extraCalls, offeredTools: out.offeredTools.length + extraTools });
  return out;
}
