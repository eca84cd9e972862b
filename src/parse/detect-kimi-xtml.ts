import { callFromParts } from './call-shapes';
import type { FoundCalls } from './found-calls';
import type { JsonObject } from './json-value';
import { createMarkerFinder, skipSpace } from './marker-finder';
import { tokenBefore } from './special-tokens';
import { jsonOrText } from './xml-parameter-value';

const OPEN = '<|open|>';
const SEP = '<|sep|>';
const SECTION_OPEN = `${OPEN}tools${SEP}`;
const SECTION_CLOSE = '<|close|>tools<|sep|>';
const CALL_OPEN = `${OPEN}call`;
const CALL_CLOSE = '<|close|>call<|sep|>';
const ARGUMENT_OPEN = `${OPEN}argument`;
const ARGUMENT_CLOSE = '<|close|>argument<|sep|>';
/** Longest attributes of a call or an argument, up to their `<|sep|>`: 1 KiB. */
const MAX_ATTRIBUTES = 1024;
const ATTRIBUTE = /(\w+)="([^"]*)"/g;

/**
 * Kimi K3's calls (its XTML channels), as vLLM's `kimi_k3` parser reads them:
 * `<|open|>tools<|sep|><|open|>call tool="get_weather" index="1"<|sep|><|open|>argument key="city" type="string"<|sep|>Paris<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>`.
 * A call counts only inside the tools channel (its closing token may be cut off). Attribute
 * values are unescaped (`&quot;`, `&amp;`); a `type="string"` value is its raw text, any other is
 * JSON when it is strict JSON, else the text. A value runs to the first `<|close|>argument<|sep|>`
 * (a value holding that marker is cut there, as in vLLM). A call needs its `<|close|>call<|sep|>`
 * and a `tool` name: one cut off or broken is no call, and its text stays.
 */
export function* detectKimiXtml(text: string): Generator<FoundCalls> {
  if (!text.includes(SECTION_OPEN)) return;
  const calls = createMarkerFinder(text, CALL_OPEN);
  const sections = createMarkerFinder(text, SECTION_OPEN);
  let previousEnd = 0;
  let inSection = false;
  // The search goes on where a call broke, so each character is read a bounded number of times.
  let resume = 0;
  for (let open = calls.next(0); open >= 0; open = calls.next(Math.max(open + CALL_OPEN.length, previousEnd, resume))) {
    const start = tokenBefore(text, open, previousEnd, [SECTION_OPEN]);
    // In the channel: right after its opening token, or after another of its calls, whitespace between.
    if (start === open && !(inSection && skipSpace(text, previousEnd, open) === open)) {
      const section = sections.next(previousEnd);
      if (section < 0 || section > open) continue;
    }
    const read = readCall(text, open);
    if ('broken' in read) {
      resume = read.broken;
      continue;
    }
    const after = skipSpace(text, read.end, text.length);
    const closed = text.startsWith(SECTION_CLOSE, after);
    previousEnd = closed ? after + SECTION_CLOSE.length : read.end;
    inSection = !closed;
    if (read.call !== undefined) yield { start, end: previousEnd, calls: [read.call], format: 'kimi_xtml' };
  }
}

/** The call whose `<|open|>call` is at `at`, up to and past its `<|close|>call<|sep|>`; or where it broke. */
function readCall(text: string, at: number): { call: ReturnType<typeof callFromParts>; end: number } | { broken: number } {
  const header = readAttributes(text, at + CALL_OPEN.length);
  const name = header?.attributes.get('tool');
  if (header === undefined || name === undefined || name === '') return { broken: at + CALL_OPEN.length };
  const args: JsonObject = new Map();
  let pos = skipSpace(text, header.end, text.length);
  while (text.startsWith(ARGUMENT_OPEN, pos)) {
    const argument = readAttributes(text, pos + ARGUMENT_OPEN.length);
    const key = argument?.attributes.get('key');
    if (argument === undefined || key === undefined) return { broken: pos + ARGUMENT_OPEN.length };
    const close = text.indexOf(ARGUMENT_CLOSE, argument.end);
    // No closing marker after it: none after it for any later value either.
    if (close < 0) return { broken: text.length };
    const raw = text.slice(argument.end, close);
    args.set(key, (argument.attributes.get('type') ?? 'string') === 'string' ? raw : jsonOrText(raw));
    pos = skipSpace(text, close + ARGUMENT_CLOSE.length, text.length);
  }
  if (!text.startsWith(CALL_CLOSE, pos)) return { broken: pos };
  return { call: callFromParts(name, args), end: pos + CALL_CLOSE.length };
}

/** The attributes from `from` to the next `<|sep|>` (at most 1 KiB, no tag in them), and where they end. */
function readAttributes(text: string, from: number): { attributes: Map<string, string>; end: number } | undefined {
  if (!/\s/.test(text.charAt(from))) return undefined;
  const sep = text.slice(from, from + MAX_ATTRIBUTES + SEP.length).indexOf(SEP);
  if (sep < 0) return undefined;
  const inside = text.slice(from, from + sep);
  if (inside.includes('<')) return undefined;
  const attributes = new Map<string, string>();
  for (const [, key = '', value = ''] of inside.matchAll(ATTRIBUTE)) attributes.set(key, value.replaceAll('&quot;', '"').replaceAll('&amp;', '&'));
  return { attributes, end: from + sep + SEP.length };
}
