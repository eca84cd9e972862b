/** JSON whitespace plus the no-break space and byte-order mark models sometimes emit. */
export function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0xa0 || c === 0xfeff;
}

/** An ASCII digit. */
export function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** A character a number may hold: a digit, sign, decimal point or exponent letter. */
export function isNumberChar(c: number): boolean {
  return isDigit(c) || c === 0x2e || c === 0x2d || c === 0x2b || c === 0x65 || c === 0x45;
}

/** A character of unquoted keys and bare literals: ASCII letter, digit, `_`, `$` or `-`. */
export function isWordChar(c: number): boolean {
  return (
    (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || isDigit(c) || c === 0x5f || c === 0x24 || c === 0x2d
  );
}
