/** The kinds of secret redaction names in `[REDACTED:kind]`. */
export type SecretKind =
  | 'private_key'
  | 'jwt'
  | 'github_token'
  | 'slack_token'
  | 'aws_access_key'
  | 'aws_secret_key'
  | 'api_key'
  | 'bearer'
  | 'authorization'
  | 'secret'
  | 'high_entropy';

/** A pattern whose match (or, with `keep`, the part after the first `keep` groups) is redacted. */
export interface SecretPattern {
  readonly kind: SecretKind;
  readonly regex: RegExp;
  /** Capture groups, from the first, that are kept in front of the marker (a key name, `Bearer `). */
  readonly keep: number;
}

/**
 * The patterns, most specific first. Each is linear-time: no nested or overlapping quantifiers,
 * every repeated class disjoint from what follows it, and each starts only where its first
 * character's run starts (a lookbehind on the run's own class, not `\b`: `-` is a word boundary
 * and a token character, so `-eyJ-eyJ...` started an attempt every 4 characters, each scanning
 * thousands). Test: the hostile inputs in test/middleware/redaction-redos.test.ts.
 */
export const SECRET_PATTERNS: readonly SecretPattern[] = [
  // Every repetition is bounded: a greedy loop over a whole MiB-long run cost V8 ~100 ms however
  // simple its class (measured), and a bounded one backtracks a bounded distance.
  { kind: 'jwt', regex: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,4096}\.eyJ[A-Za-z0-9_-]{5,65536}\.[A-Za-z0-9_-]{0,4096}/g, keep: 0 },
  { kind: 'github_token', regex: /(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})/g, keep: 0 },
  { kind: 'slack_token', regex: /(?<![A-Za-z0-9-])(?:xox[abposre]|xapp)-[A-Za-z0-9-]{10,512}/g, keep: 0 },
  { kind: 'aws_access_key', regex: /\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b/g, keep: 0 },
  { kind: 'aws_secret_key', regex: /\b((?:aws_?)?secret_?access_?key["']?\s*[:=]\s*["']?)[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])/gi, keep: 1 },
  { kind: 'api_key', regex: /(?<![A-Za-z0-9_-])(?:sk-[A-Za-z0-9_-]{20,512}|[sr]k_(?:live|test)_[A-Za-z0-9]{16,512}|AIza[A-Za-z0-9_-]{35})/g, keep: 0 },
  { kind: 'bearer', regex: /\b(Bearer\s+)[A-Za-z0-9._~+/-]{8,4096}={0,3}/gi, keep: 1 },
  { kind: 'authorization', regex: /\b(authorization["']?\s*[:=]\s*["']?(?:Basic|Token|Digest)\s+)[A-Za-z0-9._~+/-]{6,4096}={0,3}/gi, keep: 1 },
  {
    kind: 'api_key',
    regex: /(?<![A-Za-z0-9])((?:(?:x-)?api[_-]?(?:key|secret|token)|apikey)["']?\s*[:=]\s*["']?)[^\s"'&,;<>[\]]{8,4096}/gi,
    keep: 1,
  },
  {
    kind: 'secret',
    // Not after a letter or digit, so that DB_PASSWORD= and GITHUB_TOKEN= are caught (`\b` is not
    // there after `_`), while "tokens=" and "passwords:" are no key of these; nor are the tokens
    // of pagination (next_token, page_token), which an agent must pass back as they are.
    regex: /(?<![A-Za-z0-9])((?:access[_-]?token|auth[_-]?token|refresh[_-]?token|client[_-]?secret|secret[_-]?key|private[_-]?key|password|passwd|pwd|(?<!(?:page|next|prev|previous|continuation|sync|resume)[_-]?)token|secret|credentials?)["']?\s*[:=]\s*["']?)[^\s"'&,;<>[\]]{8,4096}/gi,
    keep: 1,
  },
  // The password of a URL's user (postgres://admin:S3cret@db/app): the scheme and user stay.
  { kind: 'secret', regex: /\b([a-z][a-z0-9+.-]{1,20}:\/\/[^\s:/@]{1,256}:)[^\s@/]{1,256}(?=@)/gi, keep: 1 },
];
