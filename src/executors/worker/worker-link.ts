import type * as grpc from '@grpc/grpc-js';
import type { WorkAssignment } from '../../../gen/dispatch/v1/worker_pb';
import type { DispatchError } from '../../errors';

/** An assignment sent to a worker and not yet answered. */
export interface PendingAssignment {
  readonly tool: string;
  resolve(output: string): void;
  reject(error: DispatchError): void;
}

/** How a worker stream ends: OK without a status, else the given status. */
export interface EndStatus {
  readonly code: grpc.status;
  readonly details: string;
}

/** One connected worker: who it is, what it hosts, what it owes, and how to reach it. */
export interface WorkerLink {
  /** Unique per server, even when two workers claim the same `worker_id`. */
  readonly serial: number;
  readonly workerId: string;
  readonly tenant: string;
  readonly tools: ReadonlySet<string>;
  /** Assignments sent and not answered, by assignment id. */
  readonly pending: Map<string, PendingAssignment>;
  /** Epoch ms of the last message from the worker. */
  lastSeen: number;
  send(assignment: WorkAssignment): void;
  end(status?: EndStatus): void;
}
