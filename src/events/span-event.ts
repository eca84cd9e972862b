import { create } from '@bufbuild/protobuf';
import { EventSchema, type Event, type EventKind } from '../../gen/dispatch/v1/dispatch_pb';
import type { SpanRecord } from './span-record';
import { timestampOf } from './timestamps';

/** The turn an event belongs to. */
export interface EventScope {
  readonly sessionId: string;
  readonly turn: number;
}

/** An event's own fields beyond its span. */
export interface EventFields {
  readonly toolCallId?: string;
  readonly tool?: string;
  readonly attempt?: number;
  /** @default the span's start */
  readonly startMs?: number;
  /** Set when the span ended (TOOL_POST, TURN_END) or for a point event. */
  readonly endMs?: number;
  readonly attributes?: Record<string, string>;
}

/** A span-shaped event: the ids, name and times of the span it belongs to, plus its own fields. */
export function spanEvent(kind: EventKind, scope: EventScope, span: SpanRecord, fields: EventFields): Event {
  return create(EventSchema, {
    kind,
    sessionId: scope.sessionId,
    turn: scope.turn,
    toolCallId: fields.toolCallId ?? '',
    tool: fields.tool ?? '',
    attempt: fields.attempt ?? 0,
    traceId: span.traceId,
    spanId: span.spanId,
    parentSpanId: span.parentSpanId,
    name: span.name,
    startTime: timestampOf(fields.startMs ?? span.startMs),
    endTime: fields.endMs === undefined ? undefined : timestampOf(fields.endMs),
    attributes: fields.attributes ?? {},
  });
}
