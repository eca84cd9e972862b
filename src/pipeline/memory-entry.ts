import { redactSecrets } from '../middleware';
import { cutUnits } from './bound-result';

/** Characters kept of each field of a trajectory entry. */
const MEMORY_FIELD_CHARS = 500;

/**
 * A trajectory entry (`tool=..; input=..; result=..`), each field cut to 500 chars. The input is
 * redacted here; the result already went through the redaction middleware, unless its tool skips
 * it (`skip_redaction`: its output reaches its caller as it is, but memory is redacted, DESIGN 9).
 */
export function memoryEntry(tool: string, input: string, result: string, redactResult = false): string {
  const shown = redactResult ? memoryField(redactSecrets(memoryField(result, MEMORY_FIELD_CHARS * 4))) : memoryField(result);
  return `tool=${tool}; input=${memoryField(redactSecrets(memoryField(input, MEMORY_FIELD_CHARS * 4)))}; result=${shown}`;
}

/**
 * The first `max` characters of `text` (never half a surrogate pair), copied when cut: V8 keeps the
 * string a slice was cut from alive with the slice, and an entry lives 24 h (a 2 MiB output stayed
 * in the heap for 532 characters of entry).
 */
function memoryField(text: string, max = MEMORY_FIELD_CHARS): string {
  return text.length <= max ? text : Buffer.from(cutUnits(text, max), 'utf16le').toString('utf16le');
}
