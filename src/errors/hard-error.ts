import { status } from '@grpc/grpc-js';

/** The `google.rpc.ErrorInfo` reasons a hard error may carry. */
export type HardErrorReason = 'LOOP_DETECTED' | 'RECOVERY_EXHAUSTED' | 'CANCELLED' | 'DEADLINE_EXCEEDED' | 'SHUTTING_DOWN';

/** A failure that ends the whole Dispatch RPC with a gRPC status instead of a soft result. */
export class HardError extends Error {
  override readonly name = 'HardError';
  /**
   * Settles once the calls this error ended (a parallel turn's running siblings, aborted by it)
   * have ended their events, so that the turn's end is observed after theirs; undefined when it
   * ended none still running.
   */
  unwound?: Promise<unknown>;
  constructor(
    readonly code: status,
    readonly reason: HardErrorReason,
    message: string,
    /** Its google.rpc.ErrorInfo metadata (tool, tool_call_id, attempts); the server adds session_id. */
    public facts: Readonly<Record<string, string | number | undefined>> = {},
  ) {
    super(message);
  }

  static cancelled(): HardError {
    return new HardError(status.CANCELLED, 'CANCELLED', 'the client cancelled the call');
  }

  /**
   * The turn was still running when dispatchd's drain grace period ended: UNAVAILABLE, which
   * clients retry (another replica takes the call), not CANCELLED, which they do not.
   */
  static shuttingDown(): HardError {
    return new HardError(status.UNAVAILABLE, 'SHUTTING_DOWN', 'dispatchd is shutting down; retry (another replica will take the call)');
  }

  /**
   * Adds to its metadata the calls of its turn that had ended when it did (`ids`, in call order):
   * their results are lost with the RPC, so without them a backend could not tell that a side
   * effect earlier in the turn had run (a sequential turn's send_email, then a call stopped
   * LOOP_DETECTED). `calls_completed` is their count; `completed_call_ids` their ids, when they
   * fit in 128 characters (the metadata is bounded: it would push out the session's id). Sent
   * again, the turn replays the side effects that ran.
   */
  withCompleted(ids: readonly string[]): this {
    if (ids.length === 0) return this;
    const joined = ids.join(',');
    this.facts = { ...this.facts, calls_completed: ids.length, ...(joined.length <= 128 ? { completed_call_ids: joined } : {}) };
    return this;
  }

  static deadline(): HardError {
    return new HardError(status.DEADLINE_EXCEEDED, 'DEADLINE_EXCEEDED', 'the RPC deadline passed');
  }
}
