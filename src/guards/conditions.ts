import { canonicalJson, readPointer } from '../json';
import { globMatch } from './glob';
import type { Condition } from './policy-types';

/** A decimal digit of any script (fullwidth, Arabic-Indic, Devanagari, ...). */
const UNICODE_DIGIT = /\p{Nd}/gu;
const NON_ASCII = /[^\x00-\x7f]/;

/**
 * The ASCII digit of a Unicode decimal digit: decimal digits are encoded in contiguous runs of ten,
 * zero first (a Unicode stability policy), so the distance from the run's start gives the value.
 */
function asciiDigit(digit: string): string {
  let ascii = ASCII_OF.get(digit);
  if (ascii === undefined) {
    const cp = digit.codePointAt(0)!;
    let start = cp;
    while (start > 0 && /\p{Nd}/u.test(String.fromCodePoint(start - 1))) start--;
    ASCII_OF.set(digit, (ascii = String((cp - start) % 10)));
  }
  return ascii;
}

/** Digits already looked up; Unicode has a few hundred, so this stays small. */
const ASCII_OF = new Map<string, string>();

/**
 * A number, or a string that spells one as some tool would read it: a rule like `amount > 1000`
 * must not be bypassed by sending `"5000"` to a tool without a schema, nor `"+5000"`, `" 5000"`
 * after any padding, `"0005000"`, `"5_000"` or `"５０００"` (Python's int() and JavaScript's
 * Number() read them all as 5000), `"0x1388"` or `"Infinity"`.
 */
function asNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isNaN(value) ? undefined : value;
  if (typeof value !== 'string') return undefined;
  let text = value;
  if (NON_ASCII.test(text)) text = text.normalize('NFKC').replace(UNICODE_DIGIT, asciiDigit);
  text = text.trim().replace(/(?<=\d)_(?=\d)/g, '');
  if (text === '') return undefined;
  if (/^[-+]?inf(?:inity)?$/i.test(text)) return text.startsWith('-') ? -Infinity : Infinity;
  const n = Number(text);
  return Number.isNaN(n) ? undefined : n;
}

const same = (a: unknown, b: unknown) => canonicalJson(a) === canonicalJson(b);

/**
 * True when `condition` holds for `args`. A missing value satisfies only `exists: false` and `!=`;
 * comparisons need numbers (or numeric strings); `=` and `in` compare JSON values whatever their key
 * order; `matches` is a glob over a string value.
 */
export function conditionHolds(condition: Condition, args: unknown): boolean {
  const actual = readPointer(args, condition.pointer);
  switch (condition.op) {
    case 'exists':
      return (actual !== undefined) === condition.value;
    case '=':
      return actual !== undefined && same(actual, condition.value);
    case '!=':
      return actual === undefined || !same(actual, condition.value);
    case 'in':
      return actual !== undefined && (condition.value as readonly unknown[]).some((v) => same(actual, v));
    case 'matches':
      return typeof actual === 'string' && globMatch(condition.value as string, actual);
    default: {
      const n = asNumber(actual);
      const limit = condition.value as number;
      if (n === undefined) return false;
      if (condition.op === '>') return n > limit;
      if (condition.op === '>=') return n >= limit;
      if (condition.op === '<') return n < limit;
      return n <= limit;
    }
  }
}

/** True when every condition holds. */
export function allHold(conditions: readonly Condition[], args: unknown): boolean {
  for (const condition of conditions) if (!conditionHolds(condition, args)) return false;
  return true;
}
