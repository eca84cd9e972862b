// A call to run on a worker as the executor (or another replica) hands it over, and the message carrying it.
import type { WorkAssignment } from '../../../gen/dispatch/v1/worker_pb';

/**
 * A WorkAssignment message, every field not given at its default: what create() makes, without
 * walking the schema on every call.
 */
export const assignment = (fields: Partial<Omit<WorkAssignment, '$typeName'>> & { assignmentId: string }): WorkAssignment => ({
  $typeName: 'dispatch.v1.WorkAssignment',
  sessionId: '',
  attempt: 0,
  idempotencyKey: '',
  deadlineMs: 0n,
  traceparent: '',
  cancel: false,
  ...fields,
});

/** One call to run on a worker, as the executor (or another replica) hands it over. */
export interface AssignmentRequest {
  /** The tenant owning the tool; workers are found under it. */
  readonly tenant: string;
  readonly tool: string;
  readonly toolCallId: string;
  /** The validated arguments as JSON text. */
  readonly argumentsJson: string;
  readonly sessionId: string;
  readonly attempt: number;
  readonly idempotencyKey: string;
  /** Epoch ms by which the worker must answer. */
  readonly deadline: number;
  readonly traceparent?: string;
  /** The tool is read-only: running it twice is harmless (see the Redis relay). */
  readonly readOnly?: boolean;
}
