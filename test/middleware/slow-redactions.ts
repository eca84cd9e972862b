import { redactSecrets } from '../../src/middleware';
import { slowerThanLinear } from '../helpers/cpu-time';

/**
 * The hostile texts whose redaction `tooSlow` finds too slow (it gives their CPU ms), each with
 * its first 40 characters: none, when every one is fine. Each text's head is redacted first, which
 * compiles the expressions its kind of input takes.
 */
export function slowRedactions(texts: Iterable<string>, tooSlow: (text: string) => number | undefined): Array<[string, number]> {
  const slow: Array<[string, number]> = [];
  for (const text of texts) {
    redactSecrets(text.slice(0, 4096));
    const ms = tooSlow(text);
    if (ms !== undefined) slow.push([text.slice(0, 40), Math.round(ms)]);
  }
  return slow;
}

/** Too slow: `limitMs` of CPU or more, and not linear (slowerThanLinear). */
export const notLinearPast = (limitMs: number) => (text: string) => slowerThanLinear(text, redactSecrets, limitMs);
