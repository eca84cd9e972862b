import type { TolerantValue } from './json-value';
import { skipSpace } from './marker-finder';
import { parseTolerantValue } from './tolerant-json';
import type { TextParameter } from './types';

/**
 * A value written between tags (Qwen3-Coder's `<parameter=key>`, GLM's `<arg_value>`): the text
 * less one leading and one trailing line end (`\n` or `\r\n`: the templates write each value on
 * lines of its own), read as JSON when it is strict JSON (`3`, `true`, `null`, `{"a":1}`, `"x"`),
 * else kept as that text. The trim is vLLM's (`qwen3_coder` tool parser); JSON first is SGLang's
 * rule for a parameter with no schema, less its Python-literal fallback: the schema may be
 * unknown, and a string such as `007` or `None` must not change. Numbers keep their digits. A
 * parameter whose tool asks for text is read by `readParameter`.
 */
export function parameterValue(raw: string): TolerantValue {
  return jsonOrText(parameterText(raw));
}

/** `value` read as JSON when it is strict JSON (numbers keeping their digits), else the text itself. */
export function jsonOrText(value: string): TolerantValue {
  if (!isStrictJson(value)) return value;
  const parsed = parseTolerantValue(value, skipSpace(value, 0, value.length), value.length);
  if (!parsed.ok || skipSpace(value, parsed.end, value.length) !== value.length) return value;
  return parsed.value;
}

/**
 * A value as `parameterValue` reads it, unless its tool's schema asks for text (`kind`, see
 * `TextParameter`): then the text less its line ends, the exact text `null` null for a string
 * that may be null. So `12345` for a zip code, or `true` for a title, stays that text, as vLLM's
 * `qwen3_coder` and `glm4_moe` parsers keep a string parameter's.
 */
export function readParameter(raw: string, kind: TextParameter | undefined): TolerantValue {
  if (kind === undefined) return parameterValue(raw);
  const text = parameterText(raw);
  return kind === 'text_or_null' && text === 'null' ? null : text;
}

/** The text of a value: less one leading and one trailing line end (`\n` or `\r\n`). */
function parameterText(raw: string): string {
  const from = lineEndAt(raw, 0);
  const trailing = raw.endsWith('\r\n') ? 2 : raw.endsWith('\n') ? 1 : 0;
  const to = raw.length - trailing >= from ? raw.length - trailing : raw.length;
  return raw.slice(from, to);
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
