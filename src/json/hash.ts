import { createHash } from 'node:crypto';

/** A short, stable hash of text (hex SHA-256, first 32 characters). */
export function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 32);
}
