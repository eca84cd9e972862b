import type { TolerantValue } from './json-value';
import { skipSpace } from './marker-finder';
import { parseTolerantValue } from './tolerant-json';

/**
 * A value written between tags (Qwen3-Coder's `<parameter=key>`, GLM's `<arg_value>`): the text
 * less one leading and one trailing line end (`\n` or `\r\n`: the templates write each value on
 * lines of its own), read as JSON when it is strict JSON (`3`, `true`, `null`, `{"a":1}`, `"x"`),
 * else kept as that text. The trim is vLLM's (`qwen3_coder` tool parser); JSON first is SGLang's
 * rule for a parameter with no schema, less its Python-literal fallback: no schema reaches this
 * parser, and a string such as `007` or `None` must not change. Numbers keep their digits.
 */
export function parameterValue(raw: string): TolerantValue {
  const from = lineEndAt(raw, 0);
  const trailing = raw.endsWith('\r\n') ? 2 : raw.endsWith('\n') ? 1 : 0;
  const to = raw.length - trailing >= from ? raw.length - trailing : raw.length;
  const value = raw.slice(from, to);
  if (!isStrictJson(value)) return value;
  const parsed = parseTolerantValue(value, skipSpace(value, 0, value.length), value.length);
  if (!parsed.ok || skipSpace(value, parsed.end, value.length) !== value.length) return value;
  return parsed.value;
}

/** The length of the line end (`\n` or `\r\n`) at `pos`, or 0. */
function lineEndAt(text: string, pos: number): number {
  if (text.charCodeAt(pos) === 0x0a) return 1;
  return text.charCodeAt(pos) === 0x0d && text.charCodeAt(pos + 1) === 0x0a ? 2 : 0;
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
