/**
 * A JSON number kept as the text the model wrote, so integers beyond 2^53 survive the trip
 * from model output to tool arguments unchanged.
 */
export class JsonNumber {
  constructor(readonly text: string) {}
}

// Builtins bound once: in a sandbox such as the test runner's, each global lookup costs more
// than the work around it, and these run once per token.
const ObjectMap = Map;
const { isArray } = Array;
const { stringify } = JSON;

/** A JSON object as parsed tolerantly: insertion-ordered, last duplicate wins, no prototype keys. */
export type JsonObject = Map<string, TolerantValue>;

/** A JSON value produced by the tolerant parser. */
export type TolerantValue = null | boolean | string | JsonNumber | TolerantValue[] | JsonObject;

/** Whether a parsed value is a JSON object. */
export function isJsonObject(value: TolerantValue | undefined): value is JsonObject {
  return value instanceof ObjectMap;
}

/** Compact JSON text (no insignificant whitespace) for a tolerantly parsed value. */
export function toCompactJson(value: TolerantValue): string {
  const parts: string[] = [];
  write(value, parts);
  return parts.join('');
}

function write(value: TolerantValue, parts: string[]): void {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') {
    parts.push(stringify(value));
  } else if (value instanceof JsonNumber) {
    parts.push(value.text);
  } else if (isArray(value)) {
    parts.push('[');
    value.forEach((item, index) => {
      if (index > 0) parts.push(',');
      write(item, parts);
    });
    parts.push(']');
  } else {
    parts.push('{');
    let first = true;
    for (const [key, item] of value) {
      if (!first) parts.push(',');
      first = false;
      parts.push(stringify(key), ':');
      write(item, parts);
    }
    parts.push('}');
  }
}
