import { createHash, timingSafeEqual } from 'node:crypto';
import type { TokenEntry } from '../config';
import type { Principal, Scope } from '../server';

/** The lowercase hex SHA-256 of a token's UTF-8 bytes: the form tokens are configured in. */
export function sha256Hex(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Bearer tokens by digest; only digests are held, never a token. */
export interface TokenTable {
  /** The principal a presented token grants, or undefined. Runs in time independent of which entry matches. */
  find(token: string): Principal | undefined;
  readonly size: number;
}

interface Grant {
  readonly digest: Buffer;
  readonly principal: Principal;
}

/** Builds a table from configured entries; the first entry wins when two share a digest. */
export function createTokenTable(entries: readonly TokenEntry[]): TokenTable {
  const grants: readonly Grant[] = entries.map((e) => ({
    digest: Buffer.from(e.sha256, 'hex'),
    principal: Object.freeze({ tenant: e.tenant, scopes: new Set(e.scopes as Scope[]) }),
  }));
  return {
    size: grants.length,
    find(token) {
      const digest = createHash('sha256').update(token, 'utf8').digest();
      let found: Principal | undefined;
      // Every entry is compared, each in constant time, so timing reveals neither match nor position.
      for (const grant of grants) {
        const equal = timingSafeEqual(digest, grant.digest);
        found = equal && found === undefined ? grant.principal : found;
      }
      return found;
    },
  };
}
