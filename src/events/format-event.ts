import { EventKind, type Event } from '../../gen/dispatch/v1/dispatch_pb';
import { shortened } from '../pipeline/bound-result';
import { ATTR } from './span-attributes';
import { terminalWord } from './terminal-text';

const EXTRAS: Partial<Record<EventKind, readonly (readonly [string, string])[]>> = {
  [EventKind.CALL_RECEIVED]: [['args', ATTR.argumentsShape], ['args', ATTR.argumentsText]],
  [EventKind.TOOL_PRE]: [['effect', ATTR.effect]],
  [EventKind.TOOL_POST]: [['outcome', ATTR.outcome], ['policy', ATTR.policy], ['phase', ATTR.errorPhase], ['http', ATTR.httpStatus], ['ms', ATTR.durationMs], ['chars', ATTR.outputChars], ['message', ATTR.message]],
  [EventKind.RETRY]: [['delay_ms', ATTR.retryDelayMs], ['reason', ATTR.reason]],
  [EventKind.LOOP_WARNING]: [['message', ATTR.message]],
  [EventKind.LOOP_STOP]: [['message', ATTR.message]],
  [EventKind.BREAKER_STATE]: [['state', ATTR.breakerState]],
  [EventKind.APPROVAL_REQUESTED]: [['approval', ATTR.approvalId], ['reason', ATTR.reason]],
  [EventKind.APPROVAL_RESOLVED]: [['approval', ATTR.approvalId], ['decision', ATTR.approvalDecision], ['by', ATTR.approvalDecidedBy], ['reason', ATTR.reason]],
  [EventKind.CALL_REFUSED]: [['outcome', ATTR.outcome], ['message', ATTR.message]],
  [EventKind.TURN_END]: [['outcome', ATTR.outcome], ['calls', ATTR.calls]],
};
const FLAGS = [ATTR.replay, ATTR.cached, ATTR.truncated] as const;

/** Longest value a line shows; a longer one is cut, with `...` (an arguments shape may be 8,000 characters). */
export const MAX_SHOWN_CHARS = 512;

/**
 * A value as a line shows it: {@link terminalWord}, cut to {@link MAX_SHOWN_CHARS}. Values come
 * from the model and the caller.
 */
function quoted(value: string): string {
  return terminalWord(shortened(value, MAX_SHOWN_CHARS));
}

/**
 * One readable line for an event:
 * `12:00:01.250 TOOL_POST session=s1 turn=2 call=c1 tool=get_weather attempt=1 outcome=ok ms=12`;
 * an attempt of a fallback says which tool it ran (`tool=search ran=cached_search`), a failed
 * attempt when it failed and the HTTP status (`outcome=TOOL_ERROR phase=after http=500`).
 * The time is the event's end when it has one (TOOL_POST, TURN_END, point events), else its start.
 */
export function formatEvent(event: Event): string {
  const at = event.endTime ?? event.startTime;
  const ms = at ? Number(at.seconds) * 1000 + Math.floor(at.nanos / 1e6) : 0;
  const parts = [new Date(ms).toISOString().slice(11, 23), EventKind[event.kind] ?? String(event.kind)];
  if (event.sessionId !== '') parts.push(`session=${quoted(event.sessionId)}`, `turn=${event.turn}`);
  if (event.toolCallId !== '') parts.push(`call=${quoted(event.toolCallId)}`);
  if (event.tool !== '') parts.push(`tool=${quoted(event.tool)}`);
  // An attempt a fallback ran: the tool it ran, beside the tool the call asked for.
  const ran = event.attempt > 0 ? event.attributes[ATTR.toolName] : undefined;
  if (ran !== undefined && ran !== event.tool) parts.push(`ran=${quoted(ran)}`);
  if (event.attempt > 0) parts.push(`attempt=${event.attempt}`);
  for (const [label, key] of EXTRAS[event.kind] ?? []) {
    const value = event.attributes[key];
    if (value !== undefined && value !== '') parts.push(`${label}=${quoted(value)}`);
  }
  for (const flag of FLAGS) if (event.attributes[flag] === 'true') parts.push(flag.slice('dispatch.'.length));
  if (event.dropped > 0n) parts.push(`(${event.dropped} earlier events dropped)`);
  return parts.join(' ');
}
