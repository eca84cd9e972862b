import { EventKind } from '../../gen/dispatch/v1/dispatch_pb';
import { throttledWarn, type Logger } from '../log';
import { NOOP_OBSERVER, parseBreakerKey, type Observer, type TurnInfo, type TurnObserver } from '../pipeline';
import { attemptTargetOf, effectOf, type LookedUpTool } from './attempt-target';
import type { AttemptSink, CallSink } from './call-summary';
import { observeCall } from './call-observer';
import { LeanTurn } from './lean-observer';
import { SYSTEM_TENANT, type EventBus } from './event-bus';
import type { ObserverEnv, TurnState } from './observer-env';
import { ATTR, OUTCOME_OK } from './span-attributes';
import { endSpan, isRecording, startSpan, type SpanTracer } from './span-record';
import { spanEvent } from './span-event';
import { turnEnding, turnSpan } from './span-shapes';
import { nowMs } from './timestamps';
import { newSpanId, newTraceId, parseTraceparent } from './trace-context';

/** Options of {@link createEventObserver}. */
export interface EventObserverOptions {
  readonly bus: EventBus;
  /** Spans are recorded and exported only with a tracer. @default none (ids only) */
  readonly tracer?: SpanTracer;
  /** Receives every finished call (metrics, GetToolStats). */
  readonly onCall?: CallSink;
  /** Receives every attempt as it ends (the per-attempt metrics). */
  readonly onAttempt?: AttemptSink;
  /** Receives every breaker change. */
  readonly onBreaker?: (tool: string, state: string) => void;
  /** Events carry the arguments text instead of its shape. @default false */
  readonly debugPayloads?: boolean;
  readonly logger?: Logger;
}

/** A tool as the registry knows it: its effect and executor. */
export type ToolLookup = (tenant: string, tool: string) => LookedUpTool | undefined;

/** The pipeline observer that makes events and spans. */
export interface EventObserver extends Observer {
  /** Tells the observer where to find tools (the registry exists after the observer). */
  setToolLookup(lookup: ToolLookup): void;
}

/** Telemetry errors are logged at most this often. */
const ERROR_LOG_INTERVAL_MS = 10_000;

/**
 * Turns the pipeline's hooks into span-shaped events on `bus` and, with a tracer, OpenTelemetry
 * spans with the same ids: the turn (parented under the caller's traceparent), an
 * `execute_tool {tool}` span per call, a span per attempt. Nothing here waits or throws.
 */
export function createEventObserver(options: EventObserverOptions): EventObserver {
  const { bus, tracer } = options;
  let lookup: ToolLookup = () => undefined;
  const warnFailed = throttledWarn(options.logger, ERROR_LOG_INTERVAL_MS);
  const env: ObserverEnv = {
    bus,
    tracer,
    onCall: options.onCall,
    onAttempt: options.onAttempt,
    debugPayloads: options.debugPayloads ?? false,
    effectOf: (tenant, tool) => effectOf(lookup(tenant, tool)),
    targetOf: (tenant, tool) => attemptTargetOf(lookup(tenant, tool), tool),
    failed: (error) => warnFailed('telemetry error (calls are unaffected)', { error: error instanceof Error ? error.stack : String(error) }),
  };

  function turn(info: TurnInfo): TurnObserver {
    const startMs = nowMs();
    const caller = parseTraceparent(info.traceparent);
    const span = startSpan(tracer, caller, turnSpan(info, startMs, tracer !== undefined));
    const state: TurnState = { tenant: info.tenant, sessionId: info.sessionId, turn: info.turn, span, caller, env };
    return {
      call: (call) => observeCall(state, call),
      end(hardError) {
        try {
          const endMs = nowMs();
          endSpan(span, endMs, isRecording(span) ? turnEnding(hardError) : undefined, hardError);
          if (!bus.wants(info.tenant)) return;
          const attributes: Record<string, string> = { [ATTR.calls]: String(info.callCount), [ATTR.outcome]: hardError ?? OUTCOME_OK };
          if (hardError) attributes[ATTR.errorType] = hardError;
          bus.publish(info.tenant, spanEvent(EventKind.TURN_END, state, span, { endMs, attributes }));
        } catch (error) {
          env.failed(error);
        }
      },
    };
  }

  return {
    turn(info) {
      try {
        if (!bus.wants(info.tenant)) return new LeanTurn(info, env);
        return turn(info);
      } catch (error) {
        env.failed(error);
        return NOOP_OBSERVER.turn(info);
      }
    },
    breakerState(key, state) {
      try {
        options.onBreaker?.(key, state);
        // A tenant's own tool's breaker is that tenant's; a shared tool's goes to all who see it.
        const { tenant, tool } = parseBreakerKey(key);
        const audience = tenant === '' ? SYSTEM_TENANT : tenant;
        if (!bus.wants(audience)) return;
        const at = nowMs();
        const span = { traceId: newTraceId(), spanId: newSpanId(), flags: '00', parentSpanId: '', name: `breaker ${tool}`, startMs: at };
        bus.publish(audience, spanEvent(EventKind.BREAKER_STATE, { sessionId: '', turn: 0 }, span, { tool, endMs: at, attributes: { [ATTR.toolName]: tool, [ATTR.breakerState]: state } }));
      } catch (error) {
        env.failed(error);
      }
    },
    setToolLookup(next) {
      lookup = next;
    },
  };
}
