// Workers whose hello overstates what their channel receives. Their own gRPC library refuses an
// assignment past the real limit (RESOURCE_EXHAUSTED on the worker's side) and resets the stream,
// which dispatch sees only as a disconnect: told "disconnected", recoverable, the call was retried
// and the same worker, reconnected with the same hello, was sent it again. Here the call that
// carried it is found; a worker id that drops its stream so twice within DROP_WINDOW_MS is blamed
// (a single drop is as likely a bug, or a crash its connection did not show), and a worker of that
// id that connects again is kept to gRPC's default limit for CAP_MS. A drop counts only when the
// worker's connection outlived its stream: a process killed (SIGKILL, an OOM kill) loses both.
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

/** Two drops just after large assignments by workers of one (tenant, id) within this blame it. */
export const DROP_WINDOW_MS = 10 * 60_000;

/** How long a worker id blamed is kept to GRPC_DEFAULT_RECEIVE_BYTES (by workers that connect meanwhile). */
export const CAP_MS = 10 * 60_000;

/** How many worker ids a drop or a lowered limit is remembered for; the oldest are forgotten first. */
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
 * taking it or within RECEIVE_FAILURE_MS after, its connection up as it did (see connectionWatch):
 * the calls beside it did not cause the end.
 */
export function receiveFailure(link: WorkerLink, now = Date.now()): ReceiveFailure | undefined {
  // A worker killed (SIGKILL, an OOM kill, a node lost) loses its connection, and Node resets its
  // streams with it: no library refused anything there.
  if (link.connectionLost?.()) return undefined;
  let last: [string, PendingAssignment] | undefined;
  for (const entry of link.pending) if (entry[1].large) last = entry;
  const large = last?.[1].large;
  if (!last || !large || now - (large.takenAt ?? now) > RECEIVE_FAILURE_MS) return undefined;
  return { assignmentId: last[0], bytes: large.bytes, limit: link.receiveLimit };
}

/** What connectionWatch reads of grpc-js's call: its HTTP/2 stream, and that stream's session. */
interface Http2Internals {
  readonly call?: { readonly stream?: { readonly session?: { readonly closed?: unknown; readonly destroyed?: unknown }; once?: (event: 'close', listener: () => void) => unknown } };
}

/**
 * Whether the connection under a worker's Work stream `call` (its HTTP/2 session) had ended, or
 * was closing, when the stream closed: a library refusing a message resets its stream alone, the
 * connection kept (RST_STREAM), while a process killed ends its connection, and Node then resets
 * the streams on it. Read as the stream closes, not after: a worker that refuses a message and then
 * closes its connection at once (exits; examples/python/worker.py closes its channel) is still
 * suspected, once its reset is out. One that exits in the tick its library refuses never sends it:
 * dispatch sees what a SIGKILL during the assignment gives (ECONNRESET, rstCode 2, the session
 * destroyed; a reset sent gives rstCode 8, CANCEL, the session up; a SIGKILL after the assignment
 * arrived gives 8 too, with the session closed), so no signal tells the two apart, and such a
 * worker is not blamed (test/workers/crash-not-blamed.test.ts; docs/failures.md). Read from
 * grpc-js 1.14's BaseServerInterceptingCall and Node's Http2Stream, as resetByPeer
 * (work-handler.ts) reads rstCode: should that change, it says false, and a crash is suspected as
 * before (test/workers/crash-not-blamed.test.ts would say so).
 */
export function connectionWatch(call: object): () => boolean {
  try {
    const stream = (call as Http2Internals).call?.stream;
    const session = stream?.session;
    if (!session || typeof stream?.once !== 'function') return () => false;
    const ended = () => session.destroyed === true || session.closed === true;
    let atClose: boolean | undefined;
    stream.once('close', () => (atClose = ended()));
    // Before its 'close' listener ran (grpc-js's own may run first, telling the handler), now is as the stream closes.
    return () => atClose ?? ended();
  } catch {
    return () => false;
  }
}

const SAID: Record<ReceiveLimit['from'], (bytes: number) => string> = {
  hello: (bytes) => `its hello said max_receive_message_bytes ${bytes}`,
  assumed: (bytes) => `its hello does not say max_receive_message_bytes, and limits.worker_receive_bytes assumes ${bytes}`,
  max_message_bytes: (bytes) => `its hello said max_receive_message_bytes of at least limits.max_message_bytes, ${bytes}`,
  // Never: no assignment past GRPC_DEFAULT_RECEIVE_BYTES goes to a worker kept to it.
  dropped: (bytes) => `dispatch keeps it to ${bytes}`,
};

/**
 * The call whose assignment the worker most likely could not receive: the second drop of its id
 * just after a large assignment within DROP_WINDOW_MS (the first call was told "disconnected").
 * DURING, as the worker may have received and run it (only "most likely" is known); not
 * recoverable: sent again, it would meet the same end (the other calls the stream held are told
 * "disconnected", recoverable).
 */
export function droppedAfterAssignmentError(tool: string, workerId: string, failure: ReceiveFailure): DispatchError {
  return new DispatchError(
    ErrorKind.UNAVAILABLE,
    `worker "${workerId}" hosting "${tool}" dropped its stream just after it was sent this call's assignment of ${failure.bytes} bytes, the second time within ${DROP_WINDOW_MS / 60_000} minutes a worker of this id did so after a large assignment, so it is most likely larger than it can receive (${SAID[failure.limit.from](failure.limit.bytes)}); the call may or may not have run. ` +
      `The worker should state a true max_receive_message_bytes in its hello (what its channel's grpc.max_receive_message_length allows); for ${CAP_MS / 60_000} minutes, a worker of this id that connects again stating ${failure.limit.bytes} is sent no assignment over ${GRPC_DEFAULT_RECEIVE_BYTES} bytes (gRPC's default receive limit); one stating more or less is believed`,
    {
      phase: 'during',
      recoverable: false,
      // Kept as it is for side-effecting tools too (see sideEffectFailure): it says to verify.
      suggestion: 'The call may or may not have run: if it changes anything, verify its effect before calling again. Its arguments were likely too large for that worker; called again, it goes only to a worker that can receive it, or is refused before running.',
    },
  );
}

/** The limit `link` is kept to now: its lowered one until that expires, else what it stated. */
export const keptTo = (link: WorkerLink, now: number): ReceiveLimit => (link.lowered !== undefined && link.lowered.until! > now ? link.lowered : link.receiveLimit);

/** Drops just after large assignments, and the limits lowered for them, by tenant and worker id. */
export interface ReceiveMemory {
  /**
   * Counts a drop of `link`'s stream just after `failure`'s assignment: true when it is the second
   * of its tenant and id within DROP_WINDOW_MS, which blames it: workers of that id that connect
   * within CAP_MS stating what it stated are kept to GRPC_DEFAULT_RECEIVE_BYTES (see lowered).
   */
  dropped(link: WorkerLink, failure: ReceiveFailure): boolean;
  /**
   * The lowered limit to keep to for a worker of this tenant and id connecting now and stating
   * `stated` (its WorkerLink.receiveLimit), else undefined: lowered within CAP_MS of the blame when
   * it states what it did when it was blamed. A lower statement is believed; a higher one (the
   * remedy the error names) clears the blame.
   */
  lowered(tenant: string, workerId: string, stated: ReceiveLimit): ReceiveLimit | undefined;
}

interface Remembered {
  /** Epoch ms of a drop not yet blamed. */
  droppedAt?: number;
  cap?: { readonly stated: number; readonly dropped: number; readonly until: number };
}

/** A memory of at most MAX_REMEMBERED worker ids (this replica's only: workers reconnect to any). */
export function createReceiveMemory(clock: () => number = Date.now): ReceiveMemory {
  const remembered = new Map<string, Remembered>();
  const key = (tenant: string, workerId: string) => `${tenant}\u0000${workerId}`;
  return {
    dropped(link, failure) {
      const k = key(link.tenant, link.workerId);
      const now = clock();
      const known = remembered.get(k);
      remembered.delete(k);
      const blamed = known?.droppedAt !== undefined && now - known.droppedAt <= DROP_WINDOW_MS;
      remembered.set(k, blamed ? { cap: { stated: failure.limit.bytes, dropped: failure.bytes, until: now + CAP_MS } } : { droppedAt: now, cap: known?.cap });
      if (remembered.size > MAX_REMEMBERED) remembered.delete(remembered.keys().next().value!);
      return blamed;
    },
    lowered(tenant, workerId, stated) {
      const known = remembered.get(key(tenant, workerId));
      const cap = known?.cap;
      if (!known || !cap) return undefined;
      if (cap.until <= clock() || stated.bytes > cap.stated) {
        known.cap = undefined;
        return undefined;
      }
      // A lower statement is believed anew; the cap stays, for the statement it was blamed under.
      if (stated.bytes < cap.stated) return undefined;
      return { bytes: GRPC_DEFAULT_RECEIVE_BYTES, from: 'dropped', said: stated.bytes, dropped: cap.dropped, until: cap.until };
    },
  };
}
