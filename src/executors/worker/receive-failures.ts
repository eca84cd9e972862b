// Workers whose hello overstates what their channel receives. Their own gRPC library refuses an
// assignment past the real limit (RESOURCE_EXHAUSTED on the worker's side) and resets the stream,
// which dispatch sees only as a disconnect: told "disconnected", recoverable, the call was retried
// and the same worker, reconnected with the same hello, was sent it again. Here the call that
// carried it is found, and the worker id's limit lowered.
import { ErrorKind } from '../../../gen/dispatch/v1/dispatch_pb';
import type { WorkAssignment } from '../../../gen/dispatch/v1/worker_pb';
import { DispatchError } from '../../errors';
import { workAssignmentBytes, workAssignmentBytesAtMost } from '../../server/work-assignment-codec';
import type { PendingAssignment, ReceiveLimit, WorkerLink } from './worker-link';

/** What every gRPC library receives by default: no assignment this size or smaller is suspected. */
export const GRPC_DEFAULT_RECEIVE_BYTES = 4 * 1024 * 1024;

/**
 * How long after the transport took a large assignment (or while it was still taking it) a stream
 * the worker ends is blamed on it: a library refusing a message does so as its length arrives, so
 * a worker that ends its stream later had received it (and ran it, or crashed for its own reasons).
 */
export const RECEIVE_FAILURE_MS = 3_000;

/** How many worker ids a lowered limit is remembered for; the oldest are forgotten first. */
const MAX_REMEMBERED = 1_024;

/** A sent assignment past GRPC_DEFAULT_RECEIVE_BYTES, while unanswered (see PendingAssignment.large). */
export interface LargeSend {
  /** Its encoded size. */
  readonly bytes: number;
  /** Epoch ms at which the transport took all of it, undefined while it has not. */
  takenAt?: number;
}

/** What to watch of `message` as it is sent: its size when past what every gRPC library receives, else undefined (measured only then). */
export function largeSend(message: WorkAssignment): LargeSend | undefined {
  if (workAssignmentBytesAtMost(message) <= GRPC_DEFAULT_RECEIVE_BYTES) return undefined;
  const bytes = workAssignmentBytes(message);
  return bytes > GRPC_DEFAULT_RECEIVE_BYTES ? { bytes } : undefined;
}

/** The assignment a worker that just ended its stream most likely could not receive, and the limit it was sent under. */
export interface ReceiveFailure {
  readonly assignmentId: string;
  readonly bytes: number;
  readonly limit: ReceiveLimit;
}

/**
 * The last large assignment `link` holds, when the worker ended its stream while the transport was
 * taking it or within RECEIVE_FAILURE_MS after: the calls beside it did not cause the end.
 */
export function receiveFailure(link: WorkerLink, now = Date.now()): ReceiveFailure | undefined {
  let last: [string, PendingAssignment] | undefined;
  for (const entry of link.pending) if (entry[1].large) last = entry;
  const large = last?.[1].large;
  if (!last || !large || now - (large.takenAt ?? now) > RECEIVE_FAILURE_MS) return undefined;
  return { assignmentId: last[0], bytes: large.bytes, limit: link.receiveLimit };
}

const SAID: Record<ReceiveLimit['from'], (bytes: number) => string> = {
  hello: (bytes) => `its hello said max_receive_message_bytes ${bytes}`,
  assumed: (bytes) => `its hello does not say max_receive_message_bytes, and limits.worker_receive_bytes assumes ${bytes}`,
  max_message_bytes: (bytes) => `its hello said max_receive_message_bytes of at least limits.max_message_bytes, ${bytes}`,
  // Never: no assignment past GRPC_DEFAULT_RECEIVE_BYTES goes to a worker kept to it.
  dropped: (bytes) => `dispatch keeps it to ${bytes}`,
};

/**
 * The call whose assignment the worker most likely could not receive. DURING, as the worker may
 * have received and run it (only "most likely" is known); not recoverable: sent again, it would
 * meet the same end (the other calls the stream held are told "disconnected", recoverable).
 */
export function droppedAfterAssignmentError(tool: string, workerId: string, failure: ReceiveFailure): DispatchError {
  return new DispatchError(
    ErrorKind.UNAVAILABLE,
    `worker "${workerId}" hosting "${tool}" dropped its stream just after it was sent this call's assignment of ${failure.bytes} bytes, most likely larger than it can receive (${SAID[failure.limit.from](failure.limit.bytes)}); the call may or may not have run. ` +
      `The worker should state a true max_receive_message_bytes in its hello (what its channel's grpc.max_receive_message_length allows); until it does, dispatch sends it no assignment over ${GRPC_DEFAULT_RECEIVE_BYTES} bytes (gRPC's default receive limit)`,
    {
      phase: 'during',
      recoverable: false,
      // Kept as it is for side-effecting tools too (see sideEffectFailure): it says to verify.
      suggestion: 'The call may or may not have run: if it changes anything, verify its effect before calling again. Its arguments were likely too large for that worker; called again, it goes only to a worker that can receive it, or is refused before running.',
    },
  );
}

/** Lowered receive limits of workers that dropped their streams after a large assignment, by tenant and worker id. */
export interface ReceiveMemory {
  /** Remembers that the worker of `link` could not receive `failure.bytes` under the limit it stated. */
  learn(link: WorkerLink, failure: ReceiveFailure): void;
  /**
   * The lowered limit to keep to for a worker of this tenant and id stating `stated` (its
   * WorkerLink.receiveLimit), else undefined: lowered when it states what it did when it dropped
   * its stream, or more; a lower statement is believed.
   */
  lowered(tenant: string, workerId: string, stated: ReceiveLimit): ReceiveLimit | undefined;
}

/** A memory of at most MAX_REMEMBERED worker ids (this replica's only: workers reconnect to any). */
export function createReceiveMemory(): ReceiveMemory {
  const lowered = new Map<string, { readonly stated: number; readonly dropped: number }>();
  const key = (tenant: string, workerId: string) => `${tenant}\u0000${workerId}`;
  return {
    learn(link, failure) {
      const k = key(link.tenant, link.workerId);
      lowered.delete(k);
      lowered.set(k, { stated: failure.limit.bytes, dropped: failure.bytes });
      if (lowered.size > MAX_REMEMBERED) lowered.delete(lowered.keys().next().value!);
    },
    lowered(tenant, workerId, stated) {
      const k = key(tenant, workerId);
      const known = lowered.get(k);
      if (!known) return undefined;
      // A lower statement is believed anew; the memory stays, for the statement it dropped under.
      if (stated.bytes < known.stated) return undefined;
      return { bytes: GRPC_DEFAULT_RECEIVE_BYTES, from: 'dropped', said: stated.bytes, dropped: known.dropped };
    },
  };
}
