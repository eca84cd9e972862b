import { fromBinary } from '@bufbuild/protobuf';
import { WorkerMessageSchema, type Completion, type Heartbeat, type WorkerMessage } from '../../gen/dispatch/v1/worker_pb';
import { Reader } from '../wire/reader';

// What a worker sends once per call, a Completion, and its heartbeats, decoded by hand as
// dispatch-request-codec.ts decodes a DispatchRequest (and for the same reason: fromBinary in front
// of a handler measured far dearer than alone). A Hello, once per stream, goes to fromBinary
// whole. The same objects as fromBinary makes, unknown fields skipped; a oneof case sent twice
// merges, as in fromBinary. test/unit/worker-message-codec.test.ts checks it against fromBinary.

/** Field numbers. */
const FIELD = {
  hello: 1,
  completion: 2,
  heartbeat: 3,
  assignmentId: 1,
  output: 2,
  isError: 3,
  errorMessage: 4,
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
        const completion: Completion = msg.case === 'completion' ? msg.value : { $typeName: 'dispatch.v1.Completion', assignmentId: '', output: '', isError: false, errorMessage: '' };
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
      default:
        reader.skip(tag);
    }
  }
  return { $typeName: 'dispatch.v1.WorkerMessage', msg };
}
