import { SpanKind } from '@opentelemetry/api';
import type { ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import type { AttemptObserver, AttemptOutcome, CallInfo, CallObserver, TurnInfo, TurnObserver } from '../pipeline';
import { summarizeCall, type CallFlags } from './call-summary';
import type { ObserverEnv } from './observer-env';
import { EXECUTE_TOOL, TURN_SPAN_NAME } from './span-attributes';
import { startSpan, type SpanRecord } from './span-record';
import { nowMs } from './timestamps';
import { formatTraceparent, parseTraceparent } from './trace-context';

// The observer of a turn that nobody watches: no tracer, and no subscriber of its tenant when it
// began. It keeps only what the call summaries need (metrics, GetToolStats) and the trace ids an
// executor may ask for, drawn when asked; one object per turn, call and attempt, methods on the
// prototype. The full observer allocates the closures and span records of events that nobody
// would receive: measured at a third of the server's CPU per call under load.
// A subscriber that joins mid-turn sees that turn's events from the next turn on.

/** A turn observed for its summaries only. */
export class LeanTurn implements TurnObserver {
  private record: SpanRecord | undefined;

  constructor(
    readonly info: TurnInfo,
    readonly env: ObserverEnv,
  ) {}

  /** The turn's span ids, under the caller's trace context; made when first asked. */
  get span(): SpanRecord {
    return (this.record ??= startSpan(undefined, parseTraceparent(this.info.traceparent), { name: TURN_SPAN_NAME, kind: SpanKind.SERVER, startMs: nowMs() }));
  }

  call(info: CallInfo): CallObserver {
    return new LeanCall(this, info);
  }

  end(): void {}
}

class LeanCall implements CallObserver, CallFlags {
  attempts = 0;
  retried = false;
  timedOut = false;
  unexpected = false;
  replayed = false;
  private readonly startMs = nowMs();
  private record: SpanRecord | undefined;
  private open: LeanAttempt | undefined;

  constructor(
    private readonly turn: LeanTurn,
    private readonly info: CallInfo,
  ) {}

  get span(): SpanRecord {
    return (this.record ??= startSpan(undefined, this.turn.span, { name: `${EXECUTE_TOOL} ${this.info.tool}`, kind: SpanKind.INTERNAL, startMs: this.startMs }));
  }

  attempt(attempt: number): AttemptObserver {
    this.attempts = attempt;
    return (this.open = new LeanAttempt(this));
  }

  /** An attempt ended, with its outcome or the hard error that left it open. */
  attemptEnded(attempt: LeanAttempt, errorType: string | undefined, replay: boolean): void {
    if (this.open !== attempt) return;
    this.open = undefined;
    if (errorType === 'TIMEOUT') this.timedOut = true;
    if (errorType === 'UNEXPECTED') this.unexpected = true;
    if (replay) this.replayed = true;
  }

  retry(): void {
    this.retried = true;
  }

  loopWarning(): void {}

  loopStop(): void {}

  replay(): void {
    this.replayed = true;
  }

  approvalRequested(): void {}

  end(result: ToolResult | undefined, hardError?: string): void {
    try {
      if (this.open) this.attemptEnded(this.open, hardError ?? 'INTERNAL', false);
      const env = this.turn.env;
      env.onCall?.(summarizeCall(this.turn.info.tenant, this.info.tool, result, hardError, this, nowMs() - this.startMs));
    } catch (error) {
      this.turn.env.failed(error);
    }
  }
}

class LeanAttempt implements AttemptObserver {
  private header: string | undefined;

  constructor(private readonly call: LeanCall) {}

  /** The attempt's traceparent, with span ids drawn now: only executors that pass it on ask. */
  get traceparent(): string {
    return (this.header ??= formatTraceparent(startSpan(undefined, this.call.span, { name: 'tool_attempt', kind: SpanKind.CLIENT, startMs: nowMs() })));
  }

  post(outcome: AttemptOutcome): void {
    this.call.attemptEnded(this, outcome.errorKind, outcome.replay);
  }
}
