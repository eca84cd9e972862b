import type { ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import type { ApprovalDecision, ApprovalRequest } from './approval-request';

/** What an observer is told about a turn when it starts. */
export interface TurnInfo {
  readonly tenant: string;
  readonly sessionId: string;
  readonly turn: number;
  /** The caller's W3C trace context, from the gRPC metadata. */
  readonly traceparent?: string;
  readonly callCount: number;
}

/** What an observer is told about a call when it is received. */
export interface CallInfo {
  readonly toolCallId: string;
  readonly tool: string;
  /** The arguments text as the model sent it. */
  readonly arguments: string;
  /**
   * No tool has the name (a made-up one): its span is named `execute_tool` alone, as its metrics
   * say `_unknown` (an observability probe: each made-up name was a new operation in Jaeger).
   */
  readonly unknown?: boolean;
}

/** The outcome of one attempt, for TOOL_POST and the attempt's span. */
export interface AttemptOutcome {
  readonly isError: boolean;
  /** Short kind name (`"TIMEOUT"`) when the attempt failed. */
  readonly errorKind?: string;
  /** When it failed: before, during or after its tool ran (DispatchError.phase). */
  readonly errorPhase?: string;
  /** What blocked it (a policy rule's name or `policies[i]`, `endpoint`, `hook`), when a policy did. */
  readonly policy?: string;
  /** The HTTP status the tool answered, when its failure was one. */
  readonly httpStatus?: number;
  /** The HTTP status the tool answered, success or not, when it answered one: for the attempt's span alone (TOOL_POST says a failure's). */
  readonly answeredStatus?: number;
  /** The failure's message, as the model reads it (redacted): events carry it only with telemetry.debug_payloads. */
  readonly errorMessage?: string;
  readonly resolvedTool: string;
  readonly durationMs: number;
  /**
   * How long its executor ran, in ms, when the attempt got that far: the tool's own time under its
   * timeout, without the hooks, approval, store, slot and rate waits before it (in `durationMs`).
   */
  readonly ranMs?: number;
  readonly replay: boolean;
  readonly cached: boolean;
  readonly truncated: boolean;
  readonly outputChars: number;
}

/** Watches one attempt. */
export interface AttemptObserver {
  /** Trace context to pass to the executor. */
  readonly traceparent: string | undefined;
  /** TOOL_POST, then the attempt's span ends. */
  post(outcome: AttemptOutcome): void;
}

/** Watches one call of a turn, across its attempts. */
export interface CallObserver {
  /** TOOL_PRE: an attempt starts (attempt counts from 1). */
  attempt(attempt: number, tool: string): AttemptObserver;
  retry(attempt: number, delayMs: number, reason: string): void;
  loopWarning(attempt: number, message: string): void;
  loopStop(attempt: number, message: string): void;
  replay(attempt: number): void;
  /** APPROVAL_REQUESTED; `request` (absent from older callers) shows what would run. */
  approvalRequested(attempt: number, approvalId: string, reason: string, request?: ApprovalRequest): void;
  /** APPROVAL_RESOLVED: a wait announced by `approvalRequested` ended, decided or not. */
  approvalResolved(attempt: number, approvalId: string, decision: ApprovalDecision): void;
  /** The call is finished; `result` is what the client gets, or undefined on a hard error. */
  end(result: ToolResult | undefined, hardError?: string): void;
  /**
   * A parallel call starts running, its wave having started it: CALL_RECEIVED came at the turn's
   * start, for every call. Its span and duration start here. The sequential path, which runs each
   * call as it is received, does not call it.
   */
  started?(): void;
  /** A parallel call's work is done: its span and duration end here, `end` coming once its wave is over. */
  finished?(): void;
}

/** Watches one Dispatch. */
export interface TurnObserver {
  /** CALL_RECEIVED. */
  call(info: CallInfo): CallObserver;
  /** TURN_END. */
  end(hardError?: string): void;
}

/**
 * Everything the pipeline reports, as a tree of handles that follows the span tree: turn, call,
 * attempt. Implementations never throw into the pipeline and never wait inside a call.
 */
export interface Observer {
  turn(info: TurnInfo): TurnObserver;
  /** A tool's breaker changed state (`closed`, `open`, `half_open`): BREAKER_STATE. */
  breakerState(tool: string, state: string): void;
}

const noopAttempt: AttemptObserver = { traceparent: undefined, post() {} };
const noopCall: CallObserver = {
  attempt: () => noopAttempt,
  retry() {},
  loopWarning() {},
  loopStop() {},
  replay() {},
  approvalRequested() {},
  approvalResolved() {},
  end() {},
};
const noopTurn: TurnObserver = { call: () => noopCall, end() {} };

/** Observes nothing, at no cost. */
export const NOOP_OBSERVER: Observer = { turn: () => noopTurn, breakerState() {} };
