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
 * every repeated class disjoint from what follows it, so a hostile output cannot make them
 * backtrack.
 */
export const SECRET_PATTERNS: readonly SecretPattern[] = [
  // Segment lengths are bounded, so a long run without the dot backtracks a bounded distance.
  { kind: 'jwt', regex: /\beyJ[A-Za-z0-9_-]{5,4096}\.eyJ[A-Za-z0-9_-]{5,65536}\.[A-Za-z0-9_-]*/g, keep: 0 },
  { kind: 'github_token', regex: /\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})/g, keep: 0 },
  { kind: 'slack_token', regex: /\b(?:xox[abposre]|xapp)-[A-Za-z0-9-]{10,}/g, keep: 0 },
  { kind: 'aws_access_key', regex: /\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b/g, keep: 0 },
  { kind: 'aws_secret_key', regex: /\b((?:aws_?)?secret_?access_?key["']?\s*[:=]\s*["']?)[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])/gi, keep: 1 },
  { kind: 'api_key', regex: /\b(?:sk-[A-Za-z0-9_-]{20,}|[sr]k_(?:live|test)_[A-Za-z0-9]{16,}|AIza[A-Za-z0-9_-]{35})/g, keep: 0 },
  { kind: 'bearer', regex: /\b(Bearer\s+)[A-Za-z0-9._~+/-]{8,}=*/gi, keep: 1 },
  { kind: 'authorization', regex: /\b(authorization["']?\s*[:=]\s*["']?(?:Basic|Token|Digest)\s+)[A-Za-z0-9._~+/-]{6,}=*/gi, keep: 1 },
  {
    kind: 'api_key',
    regex: /(?<![A-Za-z0-9])((?:(?:x-)?api[_-]?(?:key|secret|token)|apikey)["']?\s*[:=]\s*["']?)[^\s"'&,;<>[\]]{8,}/gi,
    keep: 1,
  },
  {
    kind: 'secret',
    // Not after a letter or digit, so that DB_PASSWORD= and GITHUB_TOKEN= are caught (`\b` is not
    // there after `_`), while "tokens=" and "passwords:" are no key of these; nor are the tokens
    // of pagination (next_token, page_token), which an agent must pass back as they are.
    regex: /(?<![A-Za-z0-9])((?:access[_-]?token|auth[_-]?token|refresh[_-]?token|client[_-]?secret|secret[_-]?key|private[_-]?key|password|passwd|pwd|(?<!(?:page|next|prev|previous|continuation|sync|resume)[_-]?)token|secret|credentials?)["']?\s*[:=]\s*["']?)[^\s"'&,;<>[\]]{8,}/gi,
    keep: 1,
  },
  // The password of a URL's user (postgres://admin:S3cret@db/app): the scheme and user stay.
  { kind: 'secret', regex: /\b([a-z][a-z0-9+.-]{1,20}:\/\/[^\s:/@]{1,256}:)[^\s@/]{1,256}(?=@)/gi, keep: 1 },
];
