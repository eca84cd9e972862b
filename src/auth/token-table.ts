import { hash } from 'node:crypto';
import type { TokenEntry } from '../config';
import type { Principal, Scope } from '../server';

/** The lowercase hex SHA-256 of a token's UTF-8 bytes: the form tokens are configured in. */
export function sha256Hex(token: string): string {
  return hash('sha256', token, 'hex');
}

/** Bearer tokens by digest; only digests are held, never a token. */
export interface TokenTable {
  /** The principal a presented token grants, or undefined. */
  find(token: string): Principal | undefined;
  readonly size: number;
}

/**
 * Builds a table from configured entries; the first entry wins when two share a digest. A token
 * is found by its SHA-256 digest in a map, in time independent of the table's size. Before, every
 * entry was compared in constant time, so that timing revealed neither a match nor its position:
 * 4.4 µs per lookup with one entry, 15 µs with 100, 122 µs with 1,000, on every call. A lookup
 * by digest reveals nothing usable either: timing can only tell how the digest of what a caller
 * sent relates to configured digests, and a caller cannot steer a SHA-256 digest toward one without
 * a preimage of it (which is why services look API tokens up by their hash).
 */
export function createTokenTable(entries: readonly TokenEntry[]): TokenTable {
  const byDigest = new Map<string, Principal>();
  for (const e of entries) {
    const digest = e.sha256.toLowerCase();
    if (!byDigest.has(digest)) byDigest.set(digest, Object.freeze({ tenant: e.tenant, scopes: new Set(e.scopes as Scope[]) }));
  }
  return {
    size: entries.length,
    find: (token) => byDigest.get(sha256Hex(token)),
  };
}
