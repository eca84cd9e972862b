import { fromBinary, toBinary } from '@bufbuild/protobuf';
import { WorkerMessageSchema, type Completion, type Drain, type Heartbeat, type WorkerMessage } from '../../gen/dispatch/v1/worker_pb';
import { LEN } from '../wire/growing-writer';
import { Reader } from '../wire/reader';
import { fieldSize, stringSize, uintSize, Writer } from '../wire/sized-writer';

// What a worker sends once per call, a Completion, its heartbeats and its Drain, decoded by hand as
// dispatch-request-codec.ts decodes a DispatchRequest (and for the same reason: fromBinary in front
// of a handler measured far dearer than alone). A Hello, once per stream, goes to fromBinary
// whole. The same objects as fromBinary makes, unknown fields skipped; a oneof case sent twice
// merges, as in fromBinary. test/unit/worker-message-codec.test.ts checks it against fromBinary.
// The worker's end encodes the same two messages by hand (encodeWorkerMessage, below).

/** Field numbers. */
const FIELD = {
  hello: 1,
  completion: 2,
  heartbeat: 3,
  drain: 4,
  assignmentId: 1,
  output: 2,
  isError: 3,
  errorMessage: 4,
  retryAfterMs: 5,
} as const;

/** Reads a length-delimited Completion into `into` (a second one merges, field by field). */
function readCompletion(reader: Reader, into: Completion): void {
  const fields = reader.nested();
  while (fields.pos < fields.end) {
    const tag = fields.tag();
    switch (tag >>> 3) {
      case FIELD.assignmentId:
        into.assignmentId = fields.string();
        break;
      case FIELD.output:
        into.output = fields.string();
        break;
      case FIELD.isError:
        into.isError = fields.bool();
        break;
      case FIELD.errorMessage:
        into.errorMessage = fields.string();
        break;
      case FIELD.retryAfterMs:
        into.retryAfterMs = fields.varint32();
        break;
      default:
        fields.skip(tag);
    }
  }
}

/** Skips a length-delimited message with no fields of its own, checking that what it holds is well formed. */
function skipEmpty(reader: Reader): void {
  const fields = reader.nested();
  while (fields.pos < fields.end) fields.skip(fields.tag());
}

/** Decodes a WorkerMessage as fromBinary(WorkerMessageSchema, bytes) does; throws on malformed bytes. */
export function decodeWorkerMessage(bytes: Buffer): WorkerMessage {
  const reader = new Reader(bytes);
  let msg: WorkerMessage['msg'] = { case: undefined };
  while (reader.pos < reader.end) {
    const tag = reader.tag();
    switch (tag >>> 3) {
      case FIELD.hello:
        return fromBinary(WorkerMessageSchema, bytes);
      case FIELD.completion: {
        const completion: Completion = msg.case === 'completion' ? msg.value : { $typeName: 'dispatch.v1.Completion', assignmentId: '', output: '', isError: false, errorMessage: '', retryAfterMs: 0 };
        readCompletion(reader, completion);
        msg = { case: 'completion', value: completion };
        break;
      }
      case FIELD.heartbeat: {
        skipEmpty(reader);
        const heartbeat: Heartbeat = msg.case === 'heartbeat' ? msg.value : { $typeName: 'dispatch.v1.Heartbeat' };
        msg = { case: 'heartbeat', value: heartbeat };
        break;
      }
      case FIELD.drain: {
        skipEmpty(reader);
        const drain: Drain = msg.case === 'drain' ? msg.value : { $typeName: 'dispatch.v1.Drain' };
        msg = { case: 'drain', value: drain };
        break;
      }
      default:
        reader.skip(tag);
    }
  }
  return { $typeName: 'dispatch.v1.WorkerMessage', msg };
}

/** Tags of the encoder: WorkerMessage's oneof cases, then Completion's fields. */
const TAG = {
  completion: (FIELD.completion << 3) | LEN,
  heartbeat: (FIELD.heartbeat << 3) | LEN,
  assignmentId: (FIELD.assignmentId << 3) | LEN,
  output: (FIELD.output << 3) | LEN,
  isError: FIELD.isError << 3,
  errorMessage: (FIELD.errorMessage << 3) | LEN,
  retryAfterMs: FIELD.retryAfterMs << 3,
} as const;

const hasUnknown = (message: object): boolean => (message as { $unknown?: unknown[] }).$unknown !== undefined;

/**
 * Encodes a WorkerMessage as toBinary(WorkerMessageSchema, message) does: a worker's end of the
 * stream (the client's createWorkerClient). A Completion and a Heartbeat, sent once per call and
 * every few seconds, are written by hand; a Hello, once per stream, and any message carrying
 * unknown fields go to toBinary. test/unit/worker-message-codec.test.ts checks the bytes.
 */
export function encodeWorkerMessage(message: WorkerMessage): Buffer {
  const { msg } = message;
  if (hasUnknown(message) || (msg.case !== undefined && hasUnknown(msg.value))) return Buffer.from(toBinary(WorkerMessageSchema, message));
  if (msg.case === 'heartbeat') return Buffer.from([TAG.heartbeat, 0]);
  if (msg.case !== 'completion') return Buffer.from(toBinary(WorkerMessageSchema, message));
  const completion = msg.value;
  const inner = stringSize(completion.assignmentId) + stringSize(completion.output) + (completion.isError ? 2 : 0) + stringSize(completion.errorMessage) + uintSize(completion.retryAfterMs);
  const w = new Writer(Buffer.allocUnsafe(fieldSize(inner)));
  w.nested(TAG.completion, inner);
  w.string(TAG.assignmentId, completion.assignmentId);
  w.string(TAG.output, completion.output);
  w.flag(TAG.isError, completion.isError);
  w.string(TAG.errorMessage, completion.errorMessage);
  w.uint(TAG.retryAfterMs, completion.retryAfterMs);
  return w.buf;
}
