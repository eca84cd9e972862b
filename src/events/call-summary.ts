/** What one finished call amounts to, for metrics and GetToolStats. */
export interface CallSummary {
  readonly tenant: string;
  /** The tool the model asked for. */
  readonly tool: string;
  /** False when the name matched no tool (UNKNOWN_TOOL, or not offered). */
  readonly known: boolean;
  /** `ok`, the error kind's short name (`TIMEOUT`), or a hard error's reason (`LOOP_DETECTED`). */
  readonly outcome: string;
  readonly attempts: number;
  readonly durationMs: number;
  readonly validationFailed: boolean;
  /** Some attempt timed out. */
  readonly timedOut: boolean;
  /** The call was retried at least once. */
  readonly retried: boolean;
  /** Answered from an idempotency record. */
  readonly idempotentHit: boolean;
  /** The result was cut by the dispatch layer. */
  readonly bounded: boolean;
  /** Some attempt ended UNEXPECTED (the tool crashed or broke its contract). */
  readonly unexpected: boolean;
}

/** Receives every finished call; must not throw or wait. */
export type CallSink = (summary: CallSummary) => void;
