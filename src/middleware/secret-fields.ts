import { keyKind, marker } from './redact-secrets';
import type { SecretKind } from './secret-patterns';

/** Deepest level of a value walked; below it a value is kept as it is (text redaction still reads it). */
const MAX_DEPTH = 64;

/**
 * A copy of a JSON value with every string or number under a key named like a secret replaced by
 * `[REDACTED:kind]`, whatever its length or form (redactSecrets, for text, keeps a value under 8
 * characters under a key that is not a password's, a placeholder or a plain word: `"token":1234567`,
 * `"password":"null"`). For what is shown of arguments that will run (an approval), where nothing
 * under a secret's key may pass as a word. Booleans and null are kept; an object or array under
 * such a key is replaced whole, and so is a string in a list after a flag naming a secret
 * (`["--password", "x"]`, an argv).
 */
export function redactSecretFields(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return jsonInString(value, depth);
  if (value === null || typeof value !== 'object' || depth >= MAX_DEPTH) return value;
  if (Array.isArray(value)) return value.map((item, i) => (isFlagValue(value, i) ? marker(flagKind(value[i - 1])!) : redactSecretFields(item, depth + 1)));
  // A name-value pair naming a secret (`{"name":"DB_PASSWORD","value":"..."}`, as Kubernetes writes env).
  const named = (value as Record<string, unknown>).name ?? (value as Record<string, unknown>).key;
  const pairKind = typeof named === 'string' ? keyKind(named) : undefined;
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    const kind = keyKind(key) ?? (pairKind !== undefined && key === 'value' ? pairKind : undefined);
    const hidden = kind !== undefined && field !== null && typeof field !== 'boolean' && field !== '';
    // Defined as an own property: a key named __proto__ stays a key, as JSON.parse made it.
    Object.defineProperty(out, key, { value: hidden ? marker(kind) : redactSecretFields(field, depth + 1), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** The kind of secret a list item names as a flag (`--password`, `-token`, `--db-password`). */
function flagKind(item: unknown): SecretKind | undefined {
  const name = typeof item === 'string' ? /^--?([\w-]{1,64})$/.exec(item)?.[1] : undefined;
  return name === undefined ? undefined : keyKind(name);
}

/** Whether the item at `i` of a list is the value of the flag before it (`["--password", "x"]`, an argv): a string, not empty, not another flag. */
function isFlagValue(list: readonly unknown[], i: number): boolean {
  const item = list[i];
  return i > 0 && typeof item === 'string' && item !== '' && !item.startsWith('-') && flagKind(list[i - 1]) !== undefined;
}

/** JSON text in a string (`{"config":"{\\"password\\":\\"x\\"}"}`), its secret fields hidden; other strings as they are. */
function jsonInString(text: string, depth: number): string {
  const first = text.trimStart()[0];
  if ((first !== '{' && first !== '[') || depth >= MAX_DEPTH) return text;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text;
  }
  const hidden = redactSecretFields(parsed, depth + 1);
  const again = JSON.stringify(hidden);
  // Unchanged, the text is kept as it was written (its spacing and key order).
  return again === JSON.stringify(parsed) ? text : again;
}
