import { targetOfEffect, type AttemptTarget } from './attempt-target';
import type { AttemptSink, CallSink } from './call-summary';
import type { EventBus } from './event-bus';
import type { SpanRecord, SpanTracer } from './span-record';
import type { EventScope } from './span-event';
import type { TraceContext } from './trace-context';

/** What every handle of an event observer shares. */
export interface ObserverEnv {
  readonly bus: EventBus;
  readonly tracer?: SpanTracer;
  readonly onCall?: CallSink;
  /** Receives every attempt as it ends (the per-attempt metrics). */
  readonly onAttempt?: AttemptSink;
  /** Events carry argument values, not only their shape. */
  readonly debugPayloads: boolean;
  /** `read_only`, `side_effect`, or '' when the tool is not known. */
  effectOf(tenant: string, tool: string): string;
  /** What an attempt's span takes from its tool (attempt-target.ts); without it, its effect alone. */
  targetOf?(tenant: string, tool: string): AttemptTarget;
  /** Reports an error inside telemetry; never rethrows. */
  failed(error: unknown): void;
}

/** The target of an attempt on `tool` (ObserverEnv.targetOf). */
export const targetIn = (env: ObserverEnv, tenant: string, tool: string): AttemptTarget => (env.targetOf ? env.targetOf(tenant, tool) : targetOfEffect(tool, env.effectOf(tenant, tool)));

/** One turn, as its call handles see it. */
export interface TurnState extends EventScope {
  readonly tenant: string;
  readonly span: SpanRecord;
  /** The caller's trace context, from its valid `traceparent`. */
  readonly caller: TraceContext | undefined;
  readonly env: ObserverEnv;
}

/** Span attribute values stringified for an event's attribute map (undefined values left out). */
export function stringAttributes(attributes: Record<string, string | number | boolean | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key in attributes) {
    const value = attributes[key];
    if (value !== undefined) out[key] = String(value);
  }
  return out;
}
