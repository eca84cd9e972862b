import { randomBytes } from 'node:crypto';

const ALPHABET = Buffer.from('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789', 'latin1');
const ID_LENGTH = 24;
/** Bytes at or above this would make some characters likelier than others. */
const UNBIASED_LIMIT = 256 - (256 % ALPHABET.length);

/** A fresh call id: `call_` and 24 alphanumerics from the system's secure random source. */
export function createCallId(): string {
  return createCallIds(1)[0] ?? '';
}

/** `count` fresh call ids, drawn from as few reads of the secure random source as can be. */
export function createCallIds(count: number): string[] {
  const chars = Buffer.alloc(count * ID_LENGTH);
  let filled = 0;
  while (filled < chars.length) {
    // 248 of 256 byte values are kept, so one read nearly always suffices.
    for (const byte of randomBytes(Math.ceil((chars.length - filled) * 1.1) + 16)) {
      if (byte >= UNBIASED_LIMIT) continue;
      chars[filled++] = ALPHABET[byte % ALPHABET.length] ?? 0x30;
      if (filled === chars.length) break;
    }
  }
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push(`call_${chars.toString('latin1', i * ID_LENGTH, (i + 1) * ID_LENGTH)}`);
  return ids;
}
