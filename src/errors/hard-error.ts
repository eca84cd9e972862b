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
   * Adds to its metadata the calls of its turn that had ended when it did (`calls`: each one's
   * tool_call_id and its place in the request, in call order): their results are lost with the
   * RPC, so without them a backend could not tell that a side effect earlier in the turn had run
   * (a sequential turn's send_email, then a call stopped LOOP_DETECTED). `calls_completed` is
   * their count; `completed_call_indexes` their places, as ranges (`0-3,5`), when they fit in 200
   * characters (always, up to 128 calls); `completed_call_ids` their ids, when they fit in 128
   * characters and none holds a comma (the metadata is bounded: it would push out the session's
   * id). Before, 29-character ids (OpenAI's) left only the count past four calls, and an id
   * holding a comma read as two. Sent again, the turn replays the side effects that ran.
   */
  withCompleted(calls: readonly { readonly id: string; readonly index: number }[]): this {
    if (calls.length === 0) return this;
    const joined = calls.map((c) => c.id).join(',');
    const indexes = indexRanges(calls.map((c) => c.index));
    this.facts = {
      ...this.facts,
      calls_completed: calls.length,
      ...(indexes.length <= 200 ? { completed_call_indexes: indexes } : {}),
      ...(joined.length <= 128 && !calls.some((c) => c.id.includes(',')) ? { completed_call_ids: joined } : {}),
    };
    return this;
  }

  static deadline(): HardError {
    return new HardError(status.DEADLINE_EXCEEDED, 'DEADLINE_EXCEEDED', 'the RPC deadline passed');
  }
}

/** Ascending places as ranges: [0, 1, 2, 5, 7, 8] -> `0-2,5,7-8`. */
export function indexRanges(indexes: readonly number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < indexes.length; ) {
    let j = i;
    while (j + 1 < indexes.length && indexes[j + 1] === indexes[j]! + 1) j++;
    parts.push(j === i ? `${indexes[i]}` : `${indexes[i]}-${indexes[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}
