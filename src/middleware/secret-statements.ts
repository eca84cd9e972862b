import { value } from './secret-forms';
import type { SecretPattern } from './secret-patterns';

/**
 * Passwords a statement or a config line gives by position, with no key and separator before
 * them, so no keyed pattern reads them:
 * - SQL: `CREATE USER app IDENTIFIED BY 'pw'` (MySQL, MariaDB; Oracle's unquoted `IDENTIFIED BY
 *   tiger` too; `IDENTIFIED BY PASSWORD '*hash'`), `CREATE ROLE app WITH LOGIN PASSWORD 'pw'` and
 *   `ALTER USER app PASSWORD 'pw'` (PostgreSQL: only quoted, as a bare `password` is a word);
 * - PHP's `define('DB_PASSWORD', 'pw')` and WordPress's keys and salts
 *   (`define('AUTH_KEY', '...')`, which hold spaces: the whole quoted value goes);
 * - redis.conf's `requirepass pw` and `masterauth pw`, at a line's start.
 *
 * Group 1 (the statement, up to the value's opening quote) stays; group 2, the value, is kept
 * when a reference or a placeholder (`passwordAfter`). A quoted value runs to a quote on its line
 * (at most 1,024 characters); an unquoted one is a {@link value}. Every repetition is bounded.
 *
 * Tried only on a text that holds one of its words (`words`, a scan of its own), not through the
 * pre-check scan: any word added to that scan's alternation cost it 10-20% on an 8 KB page (an
 * alternation of that size under `i` is tried at every letter one of its words may start with),
 * the whole redaction of pages and logs with no such word 1.05-1.10x; the words alone scan
 * 8 KB in ~3.5 µs (a native `includes` for each of their spellings took ~25).
 */
export function passwordStatements(): SecretPattern {
  const word = (text: string) => text.replace(/[a-z]/g, (c) => `[${c}${c.toUpperCase()}]`);
  const sql = String.raw`\b${word('identified')}[ \t]{1,4}${word('by')}(?:[ \t]{1,4}${word('password')})?[ \t]{1,4}["']?|\b${word('password')}[ \t]{1,4}["']`;
  const define = String.raw`\bdefine\([ \t]{0,4}["'][A-Z_]{0,32}(?:PASSWORD|_KEY|_SALT)["'][ \t]{0,4},[ \t]{0,32}["']`;
  // The name first, its line's start looked back for: a pattern that may start anywhere costs its scan every character.
  const redis = String.raw`(?:requirepass|masterauth)(?<=(?<![^\n])[ \t]{0,16}(?:requirepass|masterauth))[ \t]{1,16}["']?`;
  const quoted = String.raw`(?<=["'])[^"'\n\\]{1,1024}(?=["'])`;
  const core = `(${sql}|${define}|${redis})(${quoted}|(?<![\"'])${value(1)})`;
  const words = /identified|password|define\(|requirepass|masterauth/i;
  return { kind: 'secret', regex: new RegExp(core, 'g'), keep: 1, passwordAfter: true, loose: words.source, words };
}
