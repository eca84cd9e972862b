import type * as grpc from '@grpc/grpc-js';
import type { WorkAssignment } from '../../../gen/dispatch/v1/worker_pb';
import type { DispatchError } from '../../errors';
import type { LargeSend } from './receive-failures';

/** An assignment sent to a worker and not yet answered. */
export interface PendingAssignment {
  readonly tool: string;
  /** Its arguments as sent (JSON text), for telling a call that stops workers (poison-calls.ts). */
  readonly args: string;
  /** Set when its assignment is past what every gRPC library receives (see receiveFailure). */
  readonly large?: LargeSend;
  resolve(output: string): void;
  reject(error: DispatchError): void;
}

/** How a worker stream ends: OK without a status, else the given status. */
export interface EndStatus {
  readonly code: grpc.status;
  readonly details: string;
  /** Its google.rpc.ErrorInfo reason (docs/failures.md); the code's name when absent. */
  readonly reason?: string;
}

/** The largest assignment a worker receives, in bytes, and the setting that says so (named in refusals). */
export interface ReceiveLimit {
  readonly bytes: number;
  /**
   * Which: its hello's max_receive_message_bytes, limits.worker_receive_bytes as ASSUMED (its
   * hello does not say), or limits.max_message_bytes (what it said or is assumed to receive is larger);
   * or 'dropped': workers of its id twice dropped their streams after assignments they stated they receive.
   */
  readonly from: 'hello' | 'assumed' | 'max_message_bytes' | 'dropped';
  /** When 'dropped': the bytes its hello states, the size of the assignment it dropped its stream after, and the epoch ms it is kept to until. */
  readonly said?: number;
  readonly dropped?: number;
  readonly until?: number;
}

/** One connected worker: who it is, what it hosts, what it owes, and how to reach it. */
export interface WorkerLink {
  /** Unique per server, even when two workers claim the same `worker_id`. */
  readonly serial: number;
  readonly workerId: string;
  readonly tenant: string;
  readonly tools: ReadonlySet<string>;
  /** Those of `tools` its own hello declared read-only: only these take calls treated as read-only (see runsAsRegistered). */
  readonly readOnlyTools: ReadonlySet<string>;
  /** Assignments sent and not answered, by assignment id. */
  readonly pending: Map<string, PendingAssignment>;
  /**
   * Assignments abandoned after they were sent (timed out or cancelled) and not answered since, by
   * id, with the epoch ms at which they stop counting against the link: a worker that never
   * answers is not picked before its peers (see createWorkerPool). At most MAX_OVERDUE.
   */
  readonly overdue: Map<string, number>;
  /** Epoch ms of the last message from the worker. */
  lastSeen: number;
  /** About how many bytes of assignments were written to the stream and not yet taken by the transport (the worker is not reading them). */
  unsent(): number;
  /** Epoch ms at which the transport last took an assignment from the stream, or some were first left unsent. */
  takenAt(): number;
  /** Past this many unsent bytes the link is ended (worker.maxUnsentBytes). */
  readonly maxUnsentBytes: number;
  /** No larger assignment is sent to it (its gRPC channel would refuse it and end the stream): see WorkerPool.assign. */
  readonly receiveLimit: ReceiveLimit;
  /**
   * Kept to instead of receiveLimit until its `until` when, as it connected, its id was blamed for
   * dropping streams after assignments within it (see ReceiveMemory): set by the pool.
   */
  lowered?: ReceiveLimit;
  /** Whether its connection had ended as its stream closed (a crash, not a refused message: see connectionWatch); absent, never. */
  readonly connectionLost?: () => boolean;
  /** Writes `assignment` to the stream; `taken` runs once the transport took all of it. */
  send(assignment: WorkAssignment, taken?: () => void): void;
  end(status?: EndStatus): void;
}
