import { EventKind, type Event } from '../../gen/dispatch/v1/dispatch_pb';
import { shortened } from '../pipeline';
import { ATTR } from './span-attributes';

const EXTRAS: Partial<Record<EventKind, readonly (readonly [string, string])[]>> = {
  [EventKind.CALL_RECEIVED]: [['args', ATTR.argumentsShape], ['args', ATTR.argumentsText]],
  [EventKind.TOOL_PRE]: [['effect', ATTR.effect]],
  [EventKind.TOOL_POST]: [['outcome', ATTR.outcome], ['ms', ATTR.durationMs], ['chars', ATTR.outputChars]],
  [EventKind.RETRY]: [['delay_ms', ATTR.retryDelayMs], ['reason', ATTR.reason]],
  [EventKind.LOOP_WARNING]: [['message', ATTR.message]],
  [EventKind.LOOP_STOP]: [['message', ATTR.message]],
  [EventKind.BREAKER_STATE]: [['state', ATTR.breakerState]],
  [EventKind.APPROVAL_REQUESTED]: [['approval', ATTR.approvalId], ['reason', ATTR.reason]],
  [EventKind.TURN_END]: [['outcome', ATTR.outcome], ['calls', ATTR.calls]],
};
const FLAGS = [ATTR.replay, ATTR.cached, ATTR.truncated] as const;

/** Longest value a line shows; a longer one is cut, with `...` (an arguments shape may be 8,000 characters). */
export const MAX_SHOWN_CHARS = 512;

/**
 * Characters a terminal acts on or hides, which a value shows escaped (`\u001b`): C0 controls
 * and DEL (ESC starts sequences that set the clipboard, OSC 52, or clear the screen), C1 controls
 * (U+009B is a one-character CSI), and the invisible or reordering format characters (zero-width,
 * bidirectional overrides and isolates, the byte order mark), which could make a line read as
 * another. Values come from the model and the caller.
 */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]/;
const UNSAFE_ALL = new RegExp(UNSAFE.source, 'g');

const escaped = (char: string) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;

/**
 * A value as a line shows it: as is when it is plain (no whitespace, no character from
 * {@link UNSAFE}, not empty), else quoted as JSON with those characters escaped too (JSON.stringify
 * leaves DEL, C1 and the format characters raw); cut to {@link MAX_SHOWN_CHARS} either way.
 */
function quoted(value: string): string {
  const shown = shortened(value, MAX_SHOWN_CHARS);
  if (shown !== '' && !/\s/.test(shown) && !UNSAFE.test(shown)) return shown;
  return JSON.stringify(shown).replace(UNSAFE_ALL, escaped);
}

/**
 * One readable line for an event:
 * `12:00:01.250 TOOL_POST session=s1 turn=2 call=c1 tool=get_weather attempt=1 outcome=ok ms=12`.
 * The time is the event's end when it has one (TOOL_POST, TURN_END, point events), else its start.
 */
export function formatEvent(event: Event): string {
  const at = event.endTime ?? event.startTime;
  const ms = at ? Number(at.seconds) * 1000 + Math.floor(at.nanos / 1e6) : 0;
  const parts = [new Date(ms).toISOString().slice(11, 23), EventKind[event.kind] ?? String(event.kind)];
  if (event.sessionId !== '') parts.push(`session=${quoted(event.sessionId)}`, `turn=${event.turn}`);
  if (event.toolCallId !== '') parts.push(`call=${quoted(event.toolCallId)}`);
  if (event.tool !== '') parts.push(`tool=${quoted(event.tool)}`);
  if (event.attempt > 0) parts.push(`attempt=${event.attempt}`);
  for (const [label, key] of EXTRAS[event.kind] ?? []) {
    const value = event.attributes[key];
    if (value !== undefined && value !== '') parts.push(`${label}=${quoted(value)}`);
  }
  for (const flag of FLAGS) if (event.attributes[flag] === 'true') parts.push(flag.slice('dispatch.'.length));
  if (event.dropped > 0n) parts.push(`(${event.dropped} earlier events dropped)`);
  return parts.join(' ');
}
