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

  static deadline(): HardError {
    return new HardError(status.DEADLINE_EXCEEDED, 'DEADLINE_EXCEEDED', 'the RPC deadline passed');
  }
}
