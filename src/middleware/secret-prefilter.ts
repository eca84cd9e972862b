import { SECRET_PATTERNS } from './secret-patterns';

/**
 * Every pattern in one, loose and case-insensitive: a superset of their matches, so one scan tells
 * whether any pattern can match and most texts, which hold no secret, skip the replacing scans.
 */
const ANY_SECRET_PATTERN = new RegExp(SECRET_PATTERNS.filter((p) => p.words === undefined).map((p) => `(?:${p.loose})`).join('|'), 'i');

/** Whether any pattern without `words` of its own may match `text` (the loose scan alone). */
export const anyPatternMatches = (text: string): boolean => ANY_SECRET_PATTERN.test(text);

/**
 * Literals, lower case, one of which (in any case) every match of a pattern holds, its loose form
 * and its `words` too: a key's name (`pass` and `pwd` for passwords, `key`, `token`, `secret`,
 * `credential`, `auth`), a token's prefix, a command's name (short flags), a URL's `@` or `sig=`,
 * a statement's or a webhook's words (secret-statements.ts, secret-token-formats.ts). Each is
 * written in the patterns as these letters, consumed (not in a negative lookaround), and their
 * case-insensitive scans match an ASCII letter only by an ASCII letter. A pattern added needs its
 * literal here: test/middleware/redaction-prefilter.test.ts holds an example of each pattern.
 */
const LITERALS = [
  'eyj', 'ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_', 'github_pat_', 'xox', 'xapp', 'hooks', 'akia', 'asia', 'abia', 'acca', 'secret', 'sk-', 'k_live_', 'k_test_',
  'aiza', 'glpat-', 'gldt-', 'glrt-', 'glptt-', '_v1_', 'shp', 'bearer', 'auth', 'pass', 'pwd', 'token', 'key', 'credential',
  'mysql', 'mariadb', 'redis-cli', 'docker', 'podman', 'nerdctl', 'buildah', 'helm', 'curl', 'sig=', 'signature=',
  'identified', 'define(', '/webhook', '/trigger/',
] as const;

/** A .pgpass line's port between colons (secret-patterns.ts, `pgpassLine`), looked for at a colon followed by a digit or `*`. */
const PGPASS_PORT = String.raw`:(?:[0-9]{3,5}|\*):`;

/** A literal (or the port) at lastIndex. */
const LITERAL_AT = new RegExp(`${LITERALS.map((l) => l.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')).join('|')}|${PGPASS_PORT}`, 'iy');

/** The first two characters of the literals and the port, lower case, by their codes (128 x 128). */
const FIRST_TWO = new Uint8Array(128 * 128);
for (const literal of LITERALS) FIRST_TWO[literal.charCodeAt(0) * 128 + literal.charCodeAt(1)] = 1;
for (const next of '0123456789*') FIRST_TWO[58 * 128 + next.charCodeAt(0)] = 1;

const lower = (c: number): number => (c >= 65 && c <= 90 ? c + 32 : c);

/**
 * Whether `text` holds one of the patterns' literals: false tells that no pattern can match, so
 * that the scans of every pattern are skipped (a text of 50 characters, ~0.1 µs here against
 * ~0.6 µs for theirs). Each pair of characters is looked up, and only a pair that starts a literal
 * is read further.
 */
export function holdsPatternLiteral(text: string): boolean {
  if (text.includes('@')) return true;
  let c = lower(text.charCodeAt(0));
  for (let i = 0; i + 1 < text.length; i++) {
    const d = lower(text.charCodeAt(i + 1));
    if (c < 128 && d < 128 && FIRST_TWO[c * 128 + d] === 1) {
      LITERAL_AT.lastIndex = i;
      if (LITERAL_AT.test(text)) return true;
    }
    c = d;
  }
  return false;
}
