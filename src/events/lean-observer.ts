import { EventKind, type ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import type { ApprovalDecision, ApprovalRequest, AttemptObserver, AttemptOutcome, CallInfo, CallObserver, TurnInfo, TurnObserver } from '../pipeline';
import { callErrorType, reportAttempt, summarizeCall, type CallFlags } from './call-summary';
import { eventCallInfo } from './event-bounds';
import { targetIn, type ObserverEnv } from './observer-env';
import { approvalArgumentsPoint, approvalPoint, approvalResolvedPoint, attemptEnding, attemptSpan, callEnding, callSpan, messagePoint, pointName, retryPoint, turnEnding, turnSpan } from './span-shapes';
import { endSpan, executorContext, isRecording, startSpan, type SpanRecord } from './span-record';
import { ATTR } from './span-attributes';
import { spanEvent } from './span-event';
import { nowMs } from './timestamps';
import { formatTraceparent, parseTraceparent, type TraceContext } from './trace-context';

// The observer of a turn that no subscriber watches (none of its tenant when it began). It keeps
// what the call summaries need (metrics, GetToolStats) and the spans: OpenTelemetry spans when
// traces are on, with the same names and attributes as the full observer's; otherwise only the
// trace context an executor may ask for, made when asked. One object per turn, call and attempt,
// methods on the prototype: the full observer allocates the closures and records of events that
// nobody would receive, measured at a third of the server's CPU per call under load. A subscriber
// that joins mid-turn sees events from the next turn on, but for APPROVAL_REQUESTED and
// APPROVAL_RESOLVED: they are published to whoever watches when the call asks and when it is decided.

/** A turn that no subscriber watches. */
export class LeanTurn implements TurnObserver {
  private record: SpanRecord | undefined;
  private callerRead = false;
  private callerContext: TraceContext | undefined;
  /**
   * Its calls and attempts make OpenTelemetry spans: traces are on and this turn's span records.
   * Every standard sampler decides a trace's children as it decided its root (parent-based, ratio
   * of the trace id, always on or off), so under an unsampled turn they get ids only, not SDK spans.
   */
  readonly traced: boolean;

  constructor(
    readonly info: TurnInfo,
    readonly env: ObserverEnv,
  ) {
    // A traced span starts now, for its start time; ids alone can wait until asked for.
    if (env.tracer) this.record = startSpan(env.tracer, this.caller, turnSpan(info, nowMs(), true));
    this.traced = this.record !== undefined && isRecording(this.record);
  }

  /** The caller's trace context (its valid `traceparent`), read when first asked for. */
  get caller(): TraceContext | undefined {
    if (!this.callerRead) {
      this.callerRead = true;
      this.callerContext = parseTraceparent(this.info.traceparent);
    }
    return this.callerContext;
  }

  /** The turn's span, under the caller's trace context. */
  get span(): SpanRecord {
    return (this.record ??= startSpan(undefined, this.caller, turnSpan(this.info, nowMs(), false)));
  }

  call(info: CallInfo): CallObserver {
    return new LeanCall(this, info);
  }

  end(hardError?: string): void {
    const span = this.record;
    if (!span?.span) return;
    try {
      endSpan(span, nowMs(), isRecording(span) ? turnEnding(hardError) : undefined, hardError);
    } catch (error) {
      this.env.failed(error);
    }
  }
}

class LeanCall implements CallObserver, CallFlags {
  attempts = 0;
  retried = false;
  timedOut = false;
  unexpected = false;
  replayed = false;
  private readonly startMs = nowMs();
  /** performance.now() at the start: the duration is monotonic (see observeCall). */
  private startedAt = performance.now();
  /** When a parallel call's wave started it, and when its work was done (see CallObserver.started). */
  private runStartMs: number | undefined;
  private runEndMs: number | undefined;
  private finishedAt: number | undefined;
  private record: SpanRecord | undefined;
  private open: LeanAttempt | undefined;

  /** The call as spans name it (event-bounds.ts). */
  readonly info: CallInfo;

  constructor(
    readonly turn: LeanTurn,
    sent: CallInfo,
  ) {
    this.info = eventCallInfo(sent);
    if (turn.traced) this.record = startSpan(turn.env.tracer, turn.span, callSpan(this.info, this.startMs, true));
  }

  get span(): SpanRecord {
    return (this.record ??= startSpan(undefined, this.turn.span, callSpan(this.info, this.startMs, false)));
  }

  attempt(attempt: number, tool: string): AttemptObserver {
    try {
      if (this.open) this.attemptEnded(this.open, undefined, 'SUPERSEDED');
      this.attempts = attempt;
      const { env, info } = this.turn;
      const span = this.turn.traced ? startSpan(env.tracer, this.span, attemptSpan(attempt, tool, this.info.tool, targetIn(env, info.tenant, tool), nowMs(), true)) : undefined;
      return (this.open = new LeanAttempt(this, tool, attempt, span));
    } catch (error) {
      this.turn.env.failed(error);
      return new LeanAttempt(this, tool, attempt, undefined);
    }
  }

  /** An attempt ended, with its outcome or the hard error that left it open; ends its span. */
  attemptEnded(attempt: LeanAttempt, outcome: AttemptOutcome | undefined, hardError?: string): void {
    if (this.open !== attempt) return;
    this.open = undefined;
    const errorType = outcome ? outcome.errorKind : hardError;
    if (errorType === 'TIMEOUT') this.timedOut = true;
    if (errorType === 'UNEXPECTED' && !outcome?.replay) this.unexpected = true;
    if (outcome?.replay) this.replayed = true;
    reportAttempt(this.turn.env.onAttempt, this.turn.info.tenant, this.info.tool, attempt.number, errorType, outcome);
    const span = attempt.record;
    if (span?.span) endSpan(span, nowMs(), isRecording(span) ? attemptEnding(outcome, errorType, attempt.tool, true) : undefined, errorType);
  }

  /** A point event on the open attempt's span (or the call's), when traced. */
  private point(kind: EventKind, attributes: () => Record<string, string>, onAttempt = true): void {
    if (!this.turn.traced) return;
    try {
      const target = (onAttempt ? this.open?.record : undefined) ?? this.span;
      target.span?.addEvent(pointName(kind), attributes(), nowMs());
    } catch (error) {
      this.turn.env.failed(error);
    }
  }

  retry(_attempt: number, delayMs: number, reason: string): void {
    this.retried = true;
    this.point(EventKind.RETRY, () => retryPoint(delayMs, reason), false);
  }

  loopWarning(_attempt: number, message: string): void {
    this.point(EventKind.LOOP_WARNING, () => messagePoint(message));
  }

  loopStop(_attempt: number, message: string): void {
    this.point(EventKind.LOOP_STOP, () => messagePoint(message));
  }

  replay(): void {
    this.replayed = true;
    this.point(EventKind.IDEMPOTENT_REPLAY, () => ({}));
  }

  approvalRequested(attempt: number, approvalId: string, reason: string, request?: ApprovalRequest): void {
    this.point(EventKind.APPROVAL_REQUESTED, () => approvalPoint(approvalId, reason, request));
    // Published to whoever watches by now: an approver that (re)subscribed after the turn began
    // must learn of the wait, or the call waits in vain.
    this.announce(EventKind.APPROVAL_REQUESTED, attempt, () => ({ ...approvalPoint(approvalId, reason, request), ...approvalArgumentsPoint(request) }));
  }

  approvalResolved(attempt: number, approvalId: string, decision: ApprovalDecision): void {
    this.point(EventKind.APPROVAL_RESOLVED, () => approvalResolvedPoint(approvalId, decision));
    // Whoever was told of the wait learns how it ended, with the same parenting as its request.
    this.announce(EventKind.APPROVAL_RESOLVED, attempt, () => approvalResolvedPoint(approvalId, decision));
  }

  /** An approval event published to whoever of the tenant watches now: the only events a lean turn publishes. */
  private announce(kind: EventKind, attempt: number, attributes: () => Record<string, string>): void {
    const { env, info } = this.turn;
    if (!env.bus.wants(info.tenant)) return;
    try {
      const at = nowMs();
      const on = this.open?.record ?? this.span;
      env.bus.publish(info.tenant, spanEvent(kind, info, on, { toolCallId: this.info.toolCallId, tool: this.info.tool, attempt, startMs: at, endMs: at, attributes: { [ATTR.attempt]: String(attempt), ...attributes() } }));
    } catch (error) {
      env.failed(error);
    }
  }

  started(): void {
    this.runStartMs = nowMs();
    this.startedAt = performance.now();
  }

  finished(): void {
    this.runEndMs = nowMs();
    this.finishedAt = performance.now();
  }

  end(result: ToolResult | undefined, hardError?: string): void {
    try {
      if (this.open) this.attemptEnded(this.open, undefined, hardError ?? 'INTERNAL');
      const endMs = this.runEndMs ?? nowMs();
      const span = this.record;
      if (span?.span) {
        const errorType = callErrorType(result, hardError);
        endSpan(span, endMs, isRecording(span) ? callEnding(errorType, result?.attempts ?? this.attempts) : undefined, errorType, this.runStartMs);
      }
      this.turn.env.onCall?.(summarizeCall(this.turn.info.tenant, this.info.tool, result, hardError, this, (this.finishedAt ?? performance.now()) - this.startedAt, this.turn.env));
    } catch (error) {
      this.turn.env.failed(error);
    }
  }
}

class LeanAttempt implements AttemptObserver {
  private header: string | undefined;

  constructor(
    private readonly call: LeanCall,
    readonly tool: string,
    /** Its number in the call, from 1. */
    readonly number: number,
    /** The attempt's span when traced. */
    readonly record: SpanRecord | undefined,
  ) {}

  /**
   * The traceparent its executor gets (see {@link executorContext}); ids of its own are drawn only
   * when needed: only executors that pass it on ask.
   */
  get traceparent(): string {
    if (this.header === undefined) {
      const turn = this.call.turn;
      const own = () => this.record ?? startSpan(undefined, this.call.span, attemptSpan(0, this.tool, this.tool, '', nowMs(), false));
      this.header = formatTraceparent(executorContext(turn.env.tracer, turn.caller, own));
    }
    return this.header;
  }

  post(outcome: AttemptOutcome): void {
    try {
      this.call.attemptEnded(this, outcome);
    } catch (error) {
      this.call.turn.env.failed(error);
    }
  }
}
