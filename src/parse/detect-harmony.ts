import type { FoundCalls } from './found-calls';
import { createMarkerFinder } from './marker-finder';
import { jsonArgumentsReader, readTaggedRegion, spanEnd } from './tagged-region';
import type { WorkBudget } from './tolerant-json';

const START = '<|start|>';
const CHANNEL = '<|channel|>';
const MESSAGE = '<|message|>';
const CONSTRAIN = '<|constrain|>';
const CALL = '<|call|>';
/** What may end a call's message: `<|call|>`, or the tokens of a message written as no call. */
const ENDS: readonly string[] = [CALL, '<|end|>', '<|return|>'];
const FUNCTIONS = 'functions.';
/** The longest header read either side of `<|channel|>`. */
const MAX_HEADER = 512;
/** `assistant` and an optional recipient, between `<|start|>` and `<|channel|>`. */
const START_HEADER = /^assistant(?:\s+to=(\S+))?\s*$/;
/** A recipient among the header's fields after `<|channel|>`. */
const RECIPIENT = /(?:^|\s)to=(\S+)/;
/** A recipient alone before `<|channel|>` at the start of a completion: its `<|start|>assistant` was the prompt's. */
const COMPLETION_HEADER = /^(\s*)to=(\S+)\s*$/;

/** What a message header says: where the message's span begins and whom it is for. */
interface Header {
  readonly start: number;
  readonly recipient: string | undefined;
}

/**
 * OpenAI gpt-oss (harmony) calls: a message to a recipient,
 * `<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"location":"SF"}<|call|>`,
 * the recipient also before the channel (`<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>`),
 * `<|constrain|>` optional, and the text possibly starting at `<|channel|>` or at a recipient
 * before it (` to=functions.get_weather<|channel|>`: a completion, as vLLM sees it).
 * `to=functions.NAME` calls NAME. Any other recipient is a tool the model's host runs
 * (`browser.search`, `python`, `container.exec`): such a call is returned, named as written,
 * only when `offeredTools` names it (see `FoundCalls.requiresOffer`). The message must be one
 * JSON object, whatever its content type says (vLLM passes a body that is not JSON on as text);
 * `<|call|>` may be missing, as when a server stops on it. A message from another role is no
 * call. The analysis channel's `<|channel|>analysis<|message|>` is reasoning, blanked out before
 * this reads the text (see `maskReasoning`).
 */
export function* detectHarmony(text: string, budget: WorkBudget): Generator<FoundCalls> {
  const channels = createMarkerFinder(text, CHANNEL);
  const messages = createMarkerFinder(text, MESSAGE);
  const callEnds = createMarkerFinder(text, CALL);
  let previousEnd = 0;
  for (let channel = channels.next(0); channel >= 0; ) {
    const next = channels.next(channel + CHANNEL.length);
    const messageAt = messages.next(channel + CHANNEL.length);
    const header = messageAt >= 0 && (next < 0 || messageAt < next) ? readHeader(text, channel, messageAt, previousEnd) : undefined;
    const recipient = header?.recipient;
    if (header === undefined || recipient === undefined) {
      channel = next;
      continue;
    }
    const builtIn = !recipient.startsWith(FUNCTIONS);
    const name = builtIn ? recipient : recipient.slice(FUNCTIONS.length);
    const from = messageAt + MESSAGE.length;
    const regionEnd = next < 0 ? text.length : next;
    const region = { from, regionEnd, closeAt: callEnds.next(from), mayQuoteNext: next >= 0 };
    const read = readTaggedRegion(text, region, budget, jsonArgumentsReader(text, name));
    if (read === undefined) {
      channel = next;
      continue;
    }
    const end = spanEnd(text, read.end, read.end > regionEnd ? read.end : regionEnd, ENDS);
    const span = { start: header.start, end, calls: read.calls, format: 'harmony' } as const;
    yield builtIn ? { ...span, requiresOffer: true } : span;
    previousEnd = end;
    channel = channels.next(end);
  }
}

/**
 * The header of the message whose `<|channel|>` is at `channel`: the channel, an optional
 * recipient and content type up to `<|message|>` (no other token but `<|constrain|>`), and
 * before it, when the message's `<|start|>` is there, its role and optional recipient, or at the
 * start of the text, a recipient alone (the prompt ended `<|start|>assistant`). Undefined
 * when it is no header, or the role is not the assistant's. Reads at most `MAX_HEADER`
 * characters either side.
 */
function readHeader(text: string, channel: number, messageAt: number, floor: number): Header | undefined {
  const fieldsFrom = channel + CHANNEL.length;
  if (messageAt - fieldsFrom > MAX_HEADER) return undefined;
  const written = text.slice(fieldsFrom, messageAt);
  const fields = written.includes(CONSTRAIN) ? written.replace(CONSTRAIN, ' ') : written;
  if (fields.includes('<|')) return undefined;
  const recipient = RECIPIENT.exec(fields)?.[1];
  const windowFrom = channel - MAX_HEADER > floor ? channel - MAX_HEADER : floor;
  if (windowFrom === channel) return { start: channel, recipient };
  const before = text.slice(windowFrom, channel);
  const startAt = before.lastIndexOf(START);
  if (startAt < 0 && windowFrom === 0) {
    const completion = COMPLETION_HEADER.exec(before);
    if (completion !== null) return { start: completion[1]?.length ?? 0, recipient: recipient ?? completion[2] };
  }
  if (startAt < 0 || before.includes('<|', startAt + START.length)) return { start: channel, recipient };
  const role = START_HEADER.exec(before.slice(startAt + START.length));
  if (role === null) return undefined;
  return { start: windowFrom + startAt, recipient: recipient ?? role[1] };
}
