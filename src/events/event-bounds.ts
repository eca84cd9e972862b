import type { Event } from '../../gen/dispatch/v1/dispatch_pb';
import { shortened, type CallInfo } from '../pipeline';
import { firstUnsafeChar, terminalText } from './terminal-text';

// What a model sends is bounded only by the message limit (4 MiB): a made-up tool name or call id
// may be megabytes. Events and spans copy them (CALL_RECEIVED's tool, gen_ai.tool.name, the span
// name), and a subscriber's buffer or a batch of spans keeps them, so they carry them cut.

/**
 * Longest tool name or call id that events and spans carry; a longer one is cut there, with `...`
 * after. Registered tool names are at most 128 characters (registry/validate-spec.ts).
 */
export const EVENT_NAME_CHARS = 256;

/**
 * Longest text of any other value an event or span carries from outside: the arguments' text
 * (with `debug_payloads`, secrets in it redacted) or shape, a retry's or an approval's reason, a
 * loop message. A longer one is cut, with `...` after.
 */
export const EVENT_TEXT_CHARS = 8_000;

/**
 * The call as events and spans name it: its tool name and id cut to {@link EVENT_NAME_CHARS}, and
 * the name's control and invisible or bidirectional format characters written `\u001b`
 * (terminal-text; no registered name holds one, so only a made-up name changes; a call id holding
 * one is refused at the RPC boundary). Two length tests and a scan of the name when they fit.
 */
export function eventCallInfo(info: CallInfo): CallInfo {
  if (info.tool.length <= EVENT_NAME_CHARS && info.toolCallId.length <= EVENT_NAME_CHARS && firstUnsafeChar(info.tool) === undefined) return info;
  return { toolCallId: shortened(info.toolCallId, EVENT_NAME_CHARS), tool: terminalText(shortened(info.tool, EVENT_NAME_CHARS)), arguments: info.arguments };
}

/** A value from outside as an event or span carries it: cut to {@link EVENT_TEXT_CHARS}, a copy of its own. */
export const eventText = (text: string): string => shortened(text, EVENT_TEXT_CHARS);

/** What an event is taken to weigh beyond its strings: its numbers, times and framing. */
const EVENT_BASE_BYTES = 64;
/** What each attribute is taken to weigh beyond its key and value. */
const ATTRIBUTE_BYTES = 8;

/**
 * About what an event weighs in a subscriber's buffer, in bytes: its strings' lengths (one byte
 * a character, as most are ASCII) and a little per event and attribute. O(attributes).
 */
export function eventBytes(event: Event): number {
  let bytes = EVENT_BASE_BYTES + event.sessionId.length + event.toolCallId.length + event.tool.length + event.traceId.length + event.spanId.length + event.parentSpanId.length + event.name.length;
  const attributes = event.attributes;
  for (const key in attributes) bytes += key.length + attributes[key]!.length + ATTRIBUTE_BYTES;
  return bytes;
}
