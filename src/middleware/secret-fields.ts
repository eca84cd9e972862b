import { keyKind, marker } from './redact-secrets';

/** Deepest level of a value walked; below it a value is kept as it is (text redaction still reads it). */
const MAX_DEPTH = 64;

/**
 * A copy of a JSON value with every string or number under a key named like a secret replaced by
 * `[REDACTED:kind]`, whatever its length or form (redactSecrets, for text, keeps a value under 8
 * characters or a plain word: `"password":"hunter2"`, a 4-digit `pin`). For what is shown of
 * arguments that will run (an approval), where a short password must not pass as a word. Booleans
 * and null are kept; an object or array under such a key is replaced whole.
 */
export function redactSecretFields(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object' || depth >= MAX_DEPTH) return value;
  if (Array.isArray(value)) return value.map((item) => redactSecretFields(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    const kind = keyKind(key);
    const hidden = kind !== undefined && field !== null && typeof field !== 'boolean' && field !== '';
    // Defined as an own property: a key named __proto__ stays a key, as JSON.parse made it.
    Object.defineProperty(out, key, { value: hidden ? marker(kind) : redactSecretFields(field, depth + 1), enumerable: true, writable: true, configurable: true });
  }
  return out;
}
