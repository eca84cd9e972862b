import { hash } from 'node:crypto';

/** A short, stable hash of text (hex SHA-256, first 32 characters). */
export function shortHash(text: string): string {
  return hash('sha256', text, 'hex').slice(0, 32);
}
