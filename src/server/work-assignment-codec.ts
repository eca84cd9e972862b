import { toBinary } from '@bufbuild/protobuf';
import type { ToolCall } from '../../gen/dispatch/v1/dispatch_pb';
import { WorkAssignmentSchema, type WorkAssignment } from '../../gen/dispatch/v1/worker_pb';
import { LEN } from '../wire/growing-writer';
import { Reader } from '../wire/reader';
import { fieldSize, isUint32, stringSize, uintSize, Writer } from '../wire/sized-writer';
import { readCall } from './dispatch-request-codec';

// The message dispatch writes to a worker per assignment, encoded by hand for the reason
// dispatch-response-codec.ts gives (reflective toBinary measured several percent of the server's
// CPU per worker call). Field numbers are those of proto/dispatch/v1/worker.proto and
// dispatch.proto (ToolCall); test/unit/work-assignment-codec.test.ts checks the bytes against
// toBinary for arbitrary messages and pins the field lists. The worker's end decodes it by hand
// (decodeWorkAssignment, below).

/** Field numbers (the ToolCall's are read by dispatch-request-codec.ts's readCall). */
const FIELD = { assignmentId: 1, call: 2, sessionId: 3, attempt: 4, idempotencyKey: 5, deadlineMs: 6, traceparent: 7, cancel: 8, callId: 1, callName: 2, callArguments: 3 } as const;

const TAG = {
  assignmentId: (FIELD.assignmentId << 3) | LEN,
  call: (FIELD.call << 3) | LEN,
  sessionId: (FIELD.sessionId << 3) | LEN,
  attempt: FIELD.attempt << 3,
  idempotencyKey: (FIELD.idempotencyKey << 3) | LEN,
  deadlineMs: FIELD.deadlineMs << 3,
  traceparent: (FIELD.traceparent << 3) | LEN,
  cancel: FIELD.cancel << 3,
  callId: (FIELD.callId << 3) | LEN,
  callName: (FIELD.callName << 3) | LEN,
  callArguments: (FIELD.callArguments << 3) | LEN,
} as const;

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

const callSize = (call: ToolCall): number => stringSize(call.id) + stringSize(call.name) + stringSize(call.arguments);

/** Whether encodeWorkAssignment writes `assignment` by hand (else through toBinary). */
const byHand = (assignment: WorkAssignment): boolean => isUint32(assignment.attempt) && assignment.deadlineMs >= 0n && assignment.deadlineMs <= MAX_SAFE;

/** The size of a hand-encoded assignment whose call's fields take `inner` bytes. */
function handSize(assignment: WorkAssignment, inner: number): number {
  return (
    stringSize(assignment.assignmentId) +
    (assignment.call ? fieldSize(inner) : 0) +
    stringSize(assignment.sessionId) +
    uintSize(assignment.attempt) +
    stringSize(assignment.idempotencyKey) +
    uintSize(Number(assignment.deadlineMs)) +
    stringSize(assignment.traceparent) +
    (assignment.cancel ? 2 : 0)
  );
}

/**
 * At least the bytes of `assignment`'s encoding, from its strings' UTF-16 lengths alone (3 bytes
 * of UTF-8 at most per unit, 6 of tag and length per field, 11 per number): when a worker's receive
 * limit is not below it, the call of ordinary size is not measured (see workAssignmentBytes).
 */
export function workAssignmentBytesAtMost(assignment: WorkAssignment): number {
  const { call } = assignment;
  const units = assignment.assignmentId.length + assignment.sessionId.length + assignment.idempotencyKey.length + assignment.traceparent.length + (call ? call.id.length + call.name.length + call.arguments.length : 0);
  return 3 * units + 80;
}

/** The bytes of `assignment`'s encoding (encodeWorkAssignment's length): what a worker's receive limit is compared with. */
export function workAssignmentBytes(assignment: WorkAssignment): number {
  return byHand(assignment) ? handSize(assignment, assignment.call ? callSize(assignment.call) : 0) : toBinary(WorkAssignmentSchema, assignment).length;
}

/** The protobuf encoding of a WorkAssignment, the same bytes as protobuf-es's toBinary. */
export function encodeWorkAssignment(assignment: WorkAssignment): Buffer {
  const { call, deadlineMs } = assignment;
  if (!byHand(assignment)) return Buffer.from(toBinary(WorkAssignmentSchema, assignment));
  const deadline = Number(deadlineMs);
  const inner = call ? callSize(call) : 0;
  const w = new Writer(Buffer.allocUnsafe(handSize(assignment, inner)));
  w.string(TAG.assignmentId, assignment.assignmentId);
  if (call) {
    w.nested(TAG.call, inner);
    w.string(TAG.callId, call.id);
    w.string(TAG.callName, call.name);
    w.string(TAG.callArguments, call.arguments);
  }
  w.string(TAG.sessionId, assignment.sessionId);
  w.uint(TAG.attempt, assignment.attempt);
  w.string(TAG.idempotencyKey, assignment.idempotencyKey);
  w.uint(TAG.deadlineMs, deadline);
  w.string(TAG.traceparent, assignment.traceparent);
  w.flag(TAG.cancel, assignment.cancel);
  return w.buf;
}

/**
 * Decodes a WorkAssignment as fromBinary(WorkAssignmentSchema, bytes) does: a worker's end of the
 * stream (the client's createWorkerClient), where fromBinary was the largest part of a worker's
 * CPU per call. Unknown fields are skipped, not kept in `$unknown`; malformed bytes throw.
 * test/unit/work-assignment-codec.test.ts checks it against fromBinary.
 */
export function decodeWorkAssignment(bytes: Buffer): WorkAssignment {
  const reader = new Reader(bytes);
  const out: WorkAssignment = { $typeName: 'dispatch.v1.WorkAssignment', assignmentId: '', sessionId: '', attempt: 0, idempotencyKey: '', deadlineMs: 0n, traceparent: '', cancel: false };
  while (reader.pos < reader.end) {
    const tag = reader.tag();
    switch (tag >>> 3) {
      case FIELD.assignmentId:
        out.assignmentId = reader.string();
        break;
      case FIELD.call:
        out.call = readCall(reader, out.call);
        break;
      case FIELD.sessionId:
        out.sessionId = reader.string();
        break;
      case FIELD.attempt:
        out.attempt = reader.varint32();
        break;
      case FIELD.idempotencyKey:
        out.idempotencyKey = reader.string();
        break;
      case FIELD.deadlineMs:
        out.deadlineMs = reader.varint64();
        break;
      case FIELD.traceparent:
        out.traceparent = reader.string();
        break;
      case FIELD.cancel:
        out.cancel = reader.bool();
        break;
      default:
        reader.skip(tag);
    }
  }
  return out;
}
