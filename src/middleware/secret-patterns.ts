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
  /** A key and its value: group 1 (the key, its quotes and separator) stays, group 2 is the value. */
  readonly keyed?: boolean;
}

/** Key names of API keys: `api_key`, `x-api-key`, `apiKey`, `api-secret`, `api_token`. */
const API_KEY_NAMES = '(?:x-)?api[_-]?(?:key|secret|token)|apikey';

/**
 * Key names of other secrets. The tokens of pagination (next_token, page_token) are none: an agent
 * must pass them back as they are.
 */
const SECRET_NAMES =
  'access[_-]?token|auth[_-]?token|refresh[_-]?token|client[_-]?secret|secret[_-]?key|private[_-]?key|password|passwd|pwd|' +
  '(?<!(?:page|next|prev|previous|continuation|sync|resume)[_-]?)token|secret|credentials?';

/**
 * A value after a key, up to what delimits it in the text around it: a space, a quote, `&`, `,`,
 * `;`, `<>`. A backslash goes with the character after it (JSON's `\\` and `\n`), except a quote:
 * `\"` ends the value as `"` does. Brackets are part of it only while balanced (redact-secrets.ts,
 * `valueLength`): the `}` closing a JSON object, or the `)` of a call, ends it.
 */
const VALUE = `(?:[^\\s"'&,;<>\\\\]|\\\\[^\\s"']){8,4096}`;

/**
 * A key named like a secret, not after a letter or digit (so that DB_PASSWORD= and GITHUB_TOKEN=
 * are caught, `\b` is not there after `_`, while "tokens=" and "passwords:" are no such key), its
 * quotes and separator, then its value.
 */
const keyValue = (names: string): RegExp => new RegExp(`(?<![A-Za-z0-9])((?:${names})["']?\\s*[:=]\\s*["']?)(${VALUE})`, 'gi');

/** The kinds of the values under keys named like secrets, for outputs read as JSON. */
export const SECRET_KEYS: ReadonlyArray<{ readonly kind: SecretKind; readonly name: RegExp }> = [
  { kind: 'api_key', name: new RegExp(`(?<![A-Za-z0-9])(?:${API_KEY_NAMES})$`, 'i') },
  { kind: 'secret', name: new RegExp(`(?<![A-Za-z0-9])(?:${SECRET_NAMES})$`, 'i') },
];

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
  { kind: 'api_key', regex: keyValue(API_KEY_NAMES), keep: 1, keyed: true },
  { kind: 'secret', regex: keyValue(SECRET_NAMES), keep: 1, keyed: true },
  // The password of a URL's user (postgres://admin:S3cret@db/app): the scheme and user stay. No
  // quote or backslash in it (a URL has them encoded), so it never spans two JSON strings.
  { kind: 'secret', regex: /\b([a-z][a-z0-9+.-]{1,20}:\/\/[^\s:/@]{1,256}:)[^\s@/"\\]{1,256}(?=@)/gi, keep: 1 },
];
