import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';

/** When a failure happened relative to the tool's execution; decides what may be retried. */
export type FailurePhase = 'before' | 'during' | 'after';

/** Options for a {@link DispatchError}. */
export interface DispatchErrorOptions {
  readonly recoverable?: boolean;
  readonly phase?: FailurePhase;
  readonly cause?: unknown;
  /** A concrete next step for the model; a default per kind is used when absent. */
  readonly suggestion?: string;
  /** From a Retry-After header, in milliseconds. */
  readonly retryAfterMs?: number;
  /** HTTP status of the tool's answer, when there was one. */
  readonly httpStatus?: number;
  /**
   * A retry within the turn would meet the same failure (what it waits on takes seconds to come
   * back): decideRetry does not retry it, and says nothing; retry_after_ms tells the model when.
   */
  readonly notRetriedWithinTurn?: boolean;
  /**
   * Dispatch's own trouble, not the tool's (its link to other replicas is down), or the tool's
   * refusal to run for now (a worker's retry_after_ms, as a 429): says nothing of the tool's
   * health, so its breaker does not count it (countsForBreaker).
   */
  readonly notTheTool?: boolean;
  /**
   * No host of the tool was found (no worker connected for it, here or on a replica that heard
   * the call): nothing ran. Its breaker, opened by such a failure, is one a host's return may
   * half-open (BreakerOutcome.noHost).
   */
  readonly noHost?: boolean;
}

/**
 * The one error type of the pipeline: a closed kind, the phase it happened in and whether
 * a retry could help. The original error stays in `cause` (logged, never sent to a client).
 */
export class DispatchError extends Error {
  override readonly name = 'DispatchError';
  readonly kind: ErrorKind;
  readonly phase: FailurePhase;
  readonly recoverable: boolean;
  readonly suggestion?: string;
  readonly retryAfterMs?: number;
  readonly httpStatus?: number;
  readonly notRetriedWithinTurn?: boolean;
  readonly notTheTool?: boolean;
  readonly noHost?: boolean;

  constructor(kind: ErrorKind, message: string, options: DispatchErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.kind = kind;
    this.phase = options.phase ?? 'before';
    this.recoverable = options.recoverable ?? false;
    this.suggestion = options.suggestion;
    this.retryAfterMs = options.retryAfterMs;
    this.httpStatus = options.httpStatus;
    if (options.notRetriedWithinTurn) this.notRetriedWithinTurn = true;
    if (options.notTheTool) this.notTheTool = true;
    if (options.noHost) this.noHost = true;
  }

  /**
   * This failure with a new `message` and the fields `changes` holds (one given as undefined is
   * cleared), every other field kept, its `cause` this one unless given (redaction keeps the secret
   * out of it): what redaction, bounding, a later attempt's retelling and the side-effect rules
   * make of it. Copies listing its fields by hand dropped the flags added after them
   * (notRetriedWithinTurn, notTheTool, noHost), and with them the retry and breaker decisions.
   */
  retold(message: string, changes: DispatchErrorOptions = {}): DispatchError {
    return new DispatchError(this.kind, message, { ...this.fields(), cause: this, ...changes });
  }

  /**
   * Every field of this failure but its kind, message and cause, as options: the one list of them
   * that retold and the relay's wire form (relay-messages.ts) copy, so a field added here is kept
   * by both.
   */
  fields(): DispatchErrorOptions & Pick<DispatchError, 'phase' | 'recoverable'> {
    const { phase, recoverable, suggestion, retryAfterMs, httpStatus, notRetriedWithinTurn, notTheTool, noHost } = this;
    return { phase, recoverable, suggestion, retryAfterMs, httpStatus, notRetriedWithinTurn, notTheTool, noHost };
  }

  /** Normalises anything caught into a DispatchError; unknown throwables become UNEXPECTED. */
  static from(error: unknown, phase: FailurePhase = 'during'): DispatchError {
    if (error instanceof DispatchError) return error;
    const message = error instanceof Error ? error.message : String(error);
    return new DispatchError(ErrorKind.UNEXPECTED, `the tool crashed: ${message}`, {
      phase,
      recoverable: false,
      cause: error,
    });
  }
}

/**
 * Longest message, and longest suggestion, a failed call keeps (code points): what a tool, a
 * worker, an MCP server or another replica said is cut to its head and a marker counting what was
 * left out where it becomes the call's error (pipeline/bound-failure.ts), before its result (the
 * ToolError, the error JSON) or a side-effecting call's idempotency record (replayed for its TTL,
 * in Redis or memory) takes it. Over every cut made where such texts are quoted (an HTTP body's
 * 500, a worker's or an MCP tool's 2,000, a crash's 2,000 characters), so none of those is cut
 * again; a JSON-RPC error's message had none, and a megabyte of it was stored, and sent again,
 * whole. At most 64 KiB of UTF-8 a field.
 */
export const MAX_ERROR_MESSAGE_CHARS = 16_384;

/** The short name of a kind, as the error JSON carries it (`"TIMEOUT"`). */
export function kindName(kind: ErrorKind): string {
  return ErrorKind[kind] ?? 'UNEXPECTED';
}

/** An HTTP status that says the tool's server is in trouble (5xx), or timed out waiting (408): transient, and a sign of its health. */
export const serverTrouble = (httpStatus: number): boolean => httpStatus >= 500 || httpStatus === 408;
