import { EventKind, type ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { shapeOf } from '../log';
import { redactSecrets } from '../middleware';
import { NOOP_OBSERVER, shortened, type AttemptObserver, type AttemptOutcome, type CallInfo, type CallObserver } from '../pipeline';
import { stringAttributes, targetIn, type TurnState } from './observer-env';
import { ATTR } from './span-attributes';
import { endSpan, executorContext, isRecording, startSpan, type SpanRecord } from './span-record';
import { callErrorType, reportAttempt, summarizeCall } from './call-summary';
import { EVENT_TEXT_CHARS, eventCallInfo, eventText } from './event-bounds';
import { spanEvent, type EventFields } from './span-event';
import { approvalArgumentsPoint, approvalPoint, approvalResolvedPoint, attemptEnding, attemptSpan, callEnding, callSpan, messagePoint, pointName, retryPoint } from './span-shapes';
import { nowMs } from './timestamps';
import { formatTraceparent } from './trace-context';

const NOOP_ATTEMPT = NOOP_OBSERVER.turn({ tenant: '', sessionId: '', turn: 0, callCount: 0 }).call({ toolCallId: '', tool: '', arguments: '' }).attempt(0, '');

interface OpenAttempt {
  readonly span: SpanRecord;
  readonly attempt: number;
  readonly tool: string;
  readonly effect: string;
}

/**
 * The most of a call's arguments redacted before they are cut (debug_payloads): a 4 MiB text took
 * ~200 ms. Longer ones are redacted this far, and lose their last {@link SPLIT_TAIL_CHARS} after,
 * where the slice may have split a secret (a private key's PEM block is ~3,200 characters).
 */
const REDACT_CHARS = 64_000;
const SPLIT_TAIL_CHARS = 8_000;

/**
 * Arguments as a debug event carries them: redacted, then cut. Cut first, a secret the cut split
 * kept its head, which no pattern knows (`"key":"sk-proj-A1b2...`).
 */
function debugArguments(text: string): string {
  if (text.length <= REDACT_CHARS) return eventText(redactSecrets(text));
  const redacted = redactSecrets(text.slice(0, REDACT_CHARS));
  return shortened(redacted, Math.max(0, Math.min(EVENT_TEXT_CHARS, redacted.length - SPLIT_TAIL_CHARS)));
}

function argumentAttributes(text: string, debug: boolean): Record<string, string> {
  if (debug) return { [ATTR.argumentsText]: debugArguments(text) };
  try {
    // Its keys are the model's: 32 keys of 100,000 characters make a shape of megabytes.
    return { [ATTR.argumentsShape]: eventText(JSON.stringify(shapeOf(JSON.parse(text)))) };
  } catch {
    return { [ATTR.argumentsShape]: '"unparseable"' };
  }
}

/**
 * Observes one call: CALL_RECEIVED now, an `execute_tool {tool}` span until `end`, and a child
 * span per attempt (TOOL_PRE / TOOL_POST). Every event of the call carries the requested tool
 * name, so a tool filter follows the whole call; an attempt that ran a fallback names it in
 * `gen_ai.tool.name`. An attempt the pipeline left open (LOOP_STOP, cancellation) is ended with
 * the call, and its TOOL_POST names the hard error. Builds events only while someone wants them, and never throws into the pipeline.
 */
export function observeCall(turn: TurnState, sent: CallInfo): CallObserver {
  const { env, tenant } = turn;
  const info = eventCallInfo(sent);
  const startMs = nowMs();
  // The duration comes from the monotonic clock alone: nowMs() re-anchors to the wall clock every
  // 10 s, moving by up to a millisecond or so either way (a step, more), and a call across it
  // measured negative, which took dispatch_tool_call_duration_seconds_sum down (a reset to rate()).
  let startedAt = performance.now();
  // When a parallel call's wave started it, and when its work was done (see CallObserver.started).
  let runStartMs: number | undefined;
  let runEndMs: number | undefined;
  let finishedAt: number | undefined;
  const span = startSpan(env.tracer, turn.span, callSpan(info, startMs, env.tracer !== undefined));
  let open: OpenAttempt | undefined;
  let attempts = 0;
  let retried = false;
  let timedOut = false;
  let unexpected = false;
  let replayed = false;
  const publish = (kind: EventKind, on: SpanRecord, fields: EventFields) =>
    env.bus.publish(tenant, spanEvent(kind, turn, on, { toolCallId: info.toolCallId, tool: info.tool, ...fields }));
  /** A point event on the span, and to subscribers with `published` too (what spans must not carry). */
  const point = (kind: EventKind, attempt: number, attributes: Record<string, string>, onAttempt: boolean, published?: Record<string, string>) => {
    const at = nowMs();
    const target = onAttempt && open ? open.span : span;
    target.span?.addEvent(pointName(kind), attributes, at);
    if (env.bus.wants(tenant)) publish(kind, target, { attempt, startMs: at, endMs: at, attributes: { [ATTR.attempt]: String(attempt), ...attributes, ...published } });
  };
  const guarded = (body: () => void) => {
    try {
      body();
    } catch (error) {
      env.failed(error);
    }
  };

  function finishAttempt(record: OpenAttempt, outcome: AttemptOutcome | undefined, hardError?: string): void {
    const endMs = nowMs();
    const errorType = outcome ? outcome.errorKind : hardError;
    if (errorType === 'TIMEOUT') timedOut = true;
    if (errorType === 'UNEXPECTED' && !outcome?.replay) unexpected = true;
    if (outcome?.replay) replayed = true;
    reportAttempt(env.onAttempt, tenant, info.tool, record.attempt, errorType, outcome);
    // An attempt the pipeline left open (LOOP_STOP, cancellation) still gets its TOOL_POST, with
    // the hard error as its outcome, so every TOOL_PRE has a TOOL_POST to pair with.
    const wanted = env.bus.wants(tenant);
    if (!wanted && !isRecording(record.span)) return endSpan(record.span, endMs, undefined, errorType);
    endSpan(record.span, endMs, isRecording(record.span) ? attemptEnding(outcome, errorType, record.tool, true) : undefined, errorType);
    if (!wanted) return;
    const ending = attemptEnding(outcome, errorType, record.tool, false);
    const attributes = stringAttributes({
      [ATTR.toolName]: record.tool,
      [ATTR.toolCallId]: info.toolCallId,
      [ATTR.attempt]: record.attempt,
      [ATTR.effect]: record.effect,
      ...ending,
      [ATTR.durationMs]: outcome?.durationMs,
      [ATTR.outputChars]: outcome?.outputChars,
      // The failure's words only with debug payloads: a tool's answer quoted in them may hold payload.
      [ATTR.message]: env.debugPayloads && outcome?.errorMessage ? eventText(redactSecrets(outcome.errorMessage)) : undefined,
    });
    publish(EventKind.TOOL_POST, record.span, { attempt: record.attempt, startMs: record.span.startMs, endMs, attributes });
  }

  guarded(() => {
    if (env.bus.wants(tenant)) publish(EventKind.CALL_RECEIVED, span, { attributes: { [ATTR.toolName]: info.tool, [ATTR.toolCallId]: info.toolCallId, ...argumentAttributes(info.arguments, env.debugPayloads) } });
  });

  return {
    attempt(attempt, tool): AttemptObserver {
      try {
        if (open) finishAttempt(open, undefined, 'SUPERSEDED');
        attempts = attempt;
        const target = targetIn(env, tenant, tool);
        const effect = target.effect;
        const started = startSpan(env.tracer, span, attemptSpan(attempt, tool, info.tool, target, nowMs(), env.tracer !== undefined));
        const record: OpenAttempt = { span: started, attempt, tool, effect };
        open = record;
        if (env.bus.wants(tenant)) publish(EventKind.TOOL_PRE, started, { attempt, attributes: { [ATTR.toolName]: tool, [ATTR.attempt]: String(attempt), [ATTR.effect]: effect } });
        return {
          get traceparent() {
            return formatTraceparent(executorContext(env.tracer, turn.caller, () => started));
          },
          post: (outcome) =>
            guarded(() => {
              if (open !== record) return;
              open = undefined;
              finishAttempt(record, outcome);
            }),
        };
      } catch (error) {
        env.failed(error);
        return NOOP_ATTEMPT;
      }
    },
    retry: (attempt, delayMs, reason) =>
      guarded(() => {
        retried = true;
        point(EventKind.RETRY, attempt, retryPoint(delayMs, reason), false);
      }),
    loopWarning: (attempt, message) => guarded(() => point(EventKind.LOOP_WARNING, attempt, messagePoint(message), true)),
    loopStop: (attempt, message) => guarded(() => point(EventKind.LOOP_STOP, attempt, messagePoint(message), true)),
    replay: (attempt) =>
      guarded(() => {
        replayed = true;
        point(EventKind.IDEMPOTENT_REPLAY, attempt, {}, true);
      }),
    approvalRequested: (attempt, approvalId, reason, request) => guarded(() => point(EventKind.APPROVAL_REQUESTED, attempt, approvalPoint(approvalId, reason, request), true, approvalArgumentsPoint(request))),
    approvalResolved: (attempt, approvalId, decision) => guarded(() => point(EventKind.APPROVAL_RESOLVED, attempt, approvalResolvedPoint(approvalId, decision), true)),
    started() {
      runStartMs = nowMs();
      startedAt = performance.now();
    },
    finished() {
      runEndMs = nowMs();
      finishedAt = performance.now();
    },
    end: (result, hardError) =>
      guarded(() => {
        if (open) {
          const dangling = open;
          open = undefined;
          finishAttempt(dangling, undefined, hardError ?? 'INTERNAL');
        }
        endCall(result, hardError);
      }),
  };

  function endCall(result: ToolResult | undefined, hardError: string | undefined): void {
    const endMs = runEndMs ?? nowMs();
    const errorType = callErrorType(result, hardError);
    // Refused before any attempt (an unknown tool, arguments that do not fit): no TOOL_POST says so.
    // A validation message quotes argument values, which events carry only with debug_payloads.
    if (attempts === 0 && hardError === undefined && result?.isError && env.bus.wants(tenant)) {
      const quotesNoValue = errorType === 'UNKNOWN_TOOL' || env.debugPayloads;
      const message = quotesNoValue ? eventText(redactSecrets(result.error?.message ?? '')) : undefined;
      publish(EventKind.CALL_REFUSED, span, { startMs, endMs, attributes: stringAttributes({ [ATTR.toolName]: info.tool, [ATTR.toolCallId]: info.toolCallId, ...callEnding(errorType, 0), [ATTR.message]: message }) });
    }
    endSpan(span, endMs, isRecording(span) ? callEnding(errorType, result?.attempts ?? attempts) : undefined, errorType, runStartMs);
    env.onCall?.(summarizeCall(tenant, info.tool, result, hardError, { attempts, retried, timedOut, unexpected, replayed }, (finishedAt ?? performance.now()) - startedAt, env));
  }
}
