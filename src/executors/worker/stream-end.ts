import { shortened } from '../../pipeline/bound-result';

/** Why a worker's stream ended, as its calls are told (WorkerPool.remove). */
export interface EndReason {
  /** Completes "worker "w" hosting "t" ... while running the call". */
  readonly why: string;
  /** Said after "while running the call". */
  readonly note?: string;
  /** False when calling again would likely end the same way. @default true */
  readonly recoverable?: boolean;
  /**
   * The model's next step, when UNAVAILABLE's default ("could not be reached; it is safe to call
   * again later") would contradict `recoverable: false`. Kept for side-effecting tools too
   * (sideEffectFailure keeps a suggestion given), so it must say to verify a side effect.
   * @default the kind's (suggestionFor), or the pipeline's mayHaveRunSuggestion for a side-effecting tool
   */
  readonly suggestion?: string;
  /**
   * The worker's side cancelled or reset the stream, or its connection was lost (dispatch did not
   * end it, nor did the worker half-close it): a large assignment just sent may be what its
   * library refused (see receiveFailure).
   */
  readonly byWorker?: boolean;
  /** The worker went silent past its heartbeat timeout (hung, or its host gone): as byWorker, its calls may be what stopped it (poison-calls.ts). */
  readonly hung?: boolean;
  /**
   * What the calls are told instead when the stream held several: the message that ended it was
   * one call's answer, and which one is not known (before, every call was told that its own answer
   * was too large, and to ask for less).
   */
  readonly whenShared?: Pick<EndReason, 'note' | 'suggestion'>;
}

const size = (bytes: number) => (bytes % 1_048_576 === 0 ? `${bytes / 1_048_576} MiB` : `${bytes} bytes`);

/** What grpc-js or dispatch's decoder found wrong with the message from a worker that ended its stream (see streamEndReason). */
export interface StreamEndCause {
  /** The message was over max_message_bytes: `bytes` of it, past `max` (grpc-js refused it unread). */
  readonly oversized?: { readonly bytes: number; readonly max: number };
  /** The message could not be decoded: what was wrong ("not a valid dispatch.v1.WorkerMessage (protobuf or UTF-8): invalid UTF-8 ..."). */
  readonly malformed?: string;
}

/** What a call lost with a worker's oversized answer is told to do: asking again as before brings the same answer. */
export const OVERSIZED_ANSWER_SUGGESTION =
  "The tool's answer was too large for dispatch to accept from its worker, so it was lost; calling again the same way will fail the same way. Ask for less (a narrower request, fewer items) or use another tool; if the call changes anything, verify whether it took effect before calling again.";

/** What a call lost with a worker's malformed answer is told to do: the worker would answer so again. */
export const MALFORMED_ANSWER_SUGGESTION =
  "The tool's worker sent an answer dispatch could not read (malformed: not valid protobuf or UTF-8), so it was lost; calling again the same way will likely fail the same way. Use another tool or tell the user; if the call changes anything, verify whether it took effect before calling again.";

/** The suggestion for a call lost with a worker's bad answer that may have been another call's: `what` the answer was, `next` the step. */
const SHARED_ANSWER_SUGGESTION = (what: string, next: string) =>
  `The tool's worker sent an answer ${what}, for this call or another it was running at the same time, and every call it held was lost. ${next}; if the call changes anything, verify whether it took effect before calling again.`;

/**
 * What ended a stream that dispatch did not end itself: the worker's message grpc-js refused over
 * max_message_bytes (`oversized`: never read), or one dispatch could not decode (`malformed`:
 * invalid UTF-8 in a string, bad protobuf; answered INVALID_ARGUMENT MALFORMED_REQUEST). Either is
 * the worker answering, wrongly, and the same call would likely bring the same answer: not
 * recoverable, with a suggestion saying so (UNAVAILABLE's own says it is safe to call again). With
 * neither, a disconnect (the worker's side cancelled or reset it, or its connection was lost: its
 * library may have refused an assignment, see receiveFailure; a half-close is the worker
 * stopping, and is not given this reason).
 */
export function streamEndReason(cause: StreamEndCause = {}): EndReason {
  const { oversized, malformed } = cause;
  if (oversized) {
    const note = "dispatch did not read it (a worker's answer must fit in max_message_bytes) and ended the worker's stream, failing every call it held";
    return {
      why: `sent a message (${oversized.bytes} bytes) larger than max_message_bytes (${size(oversized.max)})`,
      note,
      recoverable: false,
      suggestion: OVERSIZED_ANSWER_SUGGESTION,
      whenShared: {
        note: `${note}: the answer was this call's or another's, which is not known`,
        suggestion: SHARED_ANSWER_SUGGESTION('too large for dispatch to accept', 'Ask for less (a narrower request, fewer items) if this call asked for much; else call again'),
      },
    };
  }
  if (malformed !== undefined) {
    const note = "a worker's messages must be valid protobuf, their strings valid UTF-8: dispatch ended the worker's stream INVALID_ARGUMENT, failing every call it held";
    return {
      why: `sent a message dispatch could not decode (${shortened(malformed, 300)})`,
      note,
      recoverable: false,
      suggestion: MALFORMED_ANSWER_SUGGESTION,
      whenShared: {
        note: `${note}: the message was this call's answer or another's, which is not known`,
        suggestion: SHARED_ANSWER_SUGGESTION('unreadable (malformed)', 'Call again, or use another tool if it fails the same way'),
      },
    };
  }
  return { why: 'disconnected', byWorker: true };
}

/** The worker left this many bytes of assignments unread: it is ended, and its calls fail. */
export function unreadReason(bytes: number): EndReason {
  return { why: `was disconnected because it does not read its assignments (${size(bytes)} of them were waiting to be sent to it)` };
}
