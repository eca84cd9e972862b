import { callFromParts, type CandidateCall } from './call-shapes';
import { isWhitespace } from './char-classes';
import type { FoundCalls } from './found-calls';
import type { JsonObject, TolerantValue } from './json-value';
import { endOfName } from './detect-function-tag';
import { createMarkerFinder, skipSpace, type MarkerFinder } from './marker-finder';
import { parseTolerantValue } from './tolerant-json';

const WRAP_OPEN = '<tool_call>';
const WRAP_CLOSE = '</tool_call>';
const OPEN = '<function=';
const CLOSE = '</function>';
const PARAM_OPEN = '<parameter=';
const PARAM_CLOSE = '</parameter>';
const MAX_NAME = 256;

/** How a block after `<function=` ended: a call (or a name that is none) up to `end`, or broken at `at`. */
type Block =
  | { readonly kind: 'call'; readonly call: CandidateCall | undefined; readonly end: number }
  | { readonly kind: 'broken'; readonly at: number };

/**
 * Qwen3-Coder (and Qwen3.5) XML calls, in `<tool_call>` or bare:
 * `<tool_call><function=get_weather><parameter=city>Paris</parameter></function></tool_call>`.
 * A value runs to the first `</parameter>`, so markers quoted in it (a file's text) are not
 * calls; it is read by `parameterValue`. Only whitespace may stand between the tags, and a call
 * needs its `</function>` (or, that missing, its `</tool_call>`). A block the text ends in (cut
 * off) or broken otherwise is no call, and its text stays; the search goes on where it broke,
 * after the opening tag of a value never closed, as the other dialects let the next call's
 * marker end a call cut off inside a string. So each character is read a bounded number of
 * times. `<function=name>{json}` (Llama) is left to its own detector.
 */
export function detectQwenXml(text: string): Generator<FoundCalls> {
  return scanQwenXml(text, true);
}

/** The calls, their arguments read only when `withArguments` (else `{}`: spans alone are wanted). */
function* scanQwenXml(text: string, withArguments: boolean): Generator<FoundCalls> {
  const opens = createMarkerFinder(text, OPEN);
  const valueEnds = createMarkerFinder(text, PARAM_CLOSE);
  for (let open = opens.next(0); open >= 0; ) {
    const block = readBlock(text, open + OPEN.length, valueEnds, withArguments);
    if (block.kind === 'broken') {
      open = opens.next(block.at);
      continue;
    }
    if (block.call !== undefined) yield { start: wrapStart(text, open), end: block.end, calls: [block.call], format: 'qwen_xml' };
    open = opens.next(block.end);
  }
}

/** The block whose function name begins at `from`, up to and including its closing tags. */
function readBlock(text: string, from: number, valueEnds: MarkerFinder, withArguments: boolean): Block {
  const nameEnd = endOfNameWithin(text, from);
  if (text.charCodeAt(nameEnd) !== 0x3e || nameEnd === from) return { kind: 'broken', at: nameEnd };
  const name = text.slice(from, nameEnd);
  // Key start, key end and value end of each parameter: values are read once the call is whole.
  const params: number[] = [];
  let pos = nameEnd + 1;
  for (;;) {
    pos = skipSpace(text, pos, text.length);
    if (text.startsWith(CLOSE, pos) || text.startsWith(WRAP_CLOSE, pos)) break;
    if (!text.startsWith(PARAM_OPEN, pos)) return { kind: 'broken', at: pos };
    const keyStart = pos + PARAM_OPEN.length;
    const keyEnd = endOfNameWithin(text, keyStart);
    if (text.charCodeAt(keyEnd) !== 0x3e || keyEnd === keyStart) return { kind: 'broken', at: keyEnd };
    const valueEnd = valueEnds.next(keyEnd + 1);
    if (valueEnd < 0) return { kind: 'broken', at: keyEnd + 1 };
    params.push(keyStart, keyEnd, valueEnd);
    pos = valueEnd + PARAM_CLOSE.length;
  }
  let end = pos;
  if (text.startsWith(CLOSE, end)) {
    end += CLOSE.length;
    const after = skipSpace(text, end, text.length);
    if (text.startsWith(WRAP_CLOSE, after)) end = after + WRAP_CLOSE.length;
  } else {
    end += WRAP_CLOSE.length;
  }
  const args: JsonObject = new Map();
  for (let i = 0; withArguments && i < params.length; i += 3) {
    const keyEnd = params[i + 1] ?? 0;
    args.set(text.slice(params[i], keyEnd), parameterValue(text.slice(keyEnd + 1, params[i + 2])));
  }
  return { kind: 'call', call: callFromParts(name, args), end };
}

/**
 * A parameter's value: the text between the tags less one leading and one trailing newline (the
 * template writes each value on lines of its own), read as JSON when it is strict JSON (`3`,
 * `true`, `null`, `{"a":1}`, `"x"`), else kept as that text. The trim is vLLM's
 * (`qwen3_coder` tool parser); JSON first is SGLang's rule for a parameter with no schema, less
 * its Python-literal fallback: no schema reaches this parser, and a string such as `007` or
 * `None` must not change. Numbers keep their digits.
 */
function parameterValue(raw: string): TolerantValue {
  const from = raw.charCodeAt(0) === 0x0a ? 1 : 0;
  const to = raw.length > from && raw.charCodeAt(raw.length - 1) === 0x0a ? raw.length - 1 : raw.length;
  const value = raw.slice(from, to);
  if (!isStrictJson(value)) return value;
  const parsed = parseTolerantValue(value, skipSpace(value, 0, value.length), value.length);
  if (!parsed.ok || skipSpace(value, parsed.end, value.length) !== value.length) return value;
  return parsed.value;
}

function isStrictJson(value: string): boolean {
  const first = skipSpace(value, 0, value.length);
  if (first === value.length) return false;
  // Most text values are words: spare them the exception.
  const c = value.charCodeAt(first);
  if (!(c === 0x7b || c === 0x5b || c === 0x22 || c === 0x2d || (c >= 0x30 && c <= 0x39) || c === 0x74 || c === 0x66 || c === 0x6e)) {
    return false;
  }
  try {
    JSON.parse(value);
    return true;
  } catch {
    return false;
  }
}

/** Where the `<tool_call>` wrapping the function tag at `open` begins, or `open`. */
function wrapStart(text: string, open: number): number {
  let pos = open;
  while (pos > 0 && isWhitespace(text.charCodeAt(pos - 1))) pos--;
  return pos >= WRAP_OPEN.length && text.startsWith(WRAP_OPEN, pos - WRAP_OPEN.length) ? pos - WRAP_OPEN.length : open;
}


/**
 * The text with each Qwen XML call blanked out (same length, so offsets hold), for the fence
 * and bare JSON detectors: a value holds raw text, not a JSON string, so JSON in it (a fenced
 * example in a file being written) would otherwise read as a call of its own when the call
 * holding it names a tool not offered. The other dialects' arguments hide such JSON in strings.
 */
export function withoutQwenCalls(text: string): string {
  const kept: string[] = [];
  let copied = 0;
  for (const span of scanQwenXml(text, false)) {
    kept.push(text.slice(copied, span.start), ' '.repeat(span.end - span.start));
    copied = span.end;
  }
  if (copied === 0) return text;
  kept.push(text.slice(copied));
  return kept.join('');
}

/** The end of a name: the first `>`, `<` or whitespace, at most `MAX_NAME` characters on. */
const endOfNameWithin = (text: string, from: number): number => endOfName(text, from, Math.min(from + MAX_NAME, text.length));
