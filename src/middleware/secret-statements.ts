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
 * (at most 1,024 characters); an unquoted one is a {@link value}. Every repetition is bounded, and
 * the loose form for the pre-check scan is the statements' words.
 */
export function passwordStatements(): SecretPattern {
  const word = (text: string) => text.replace(/[a-z]/g, (c) => `[${c}${c.toUpperCase()}]`);
  const sql = String.raw`\b${word('identified')}[ \t]{1,4}${word('by')}(?:[ \t]{1,4}${word('password')})?[ \t]{1,4}["']?|\b${word('password')}[ \t]{1,4}["']`;
  const define = String.raw`\bdefine\([ \t]{0,4}["'][A-Z_]{0,32}(?:PASSWORD|_KEY|_SALT)["'][ \t]{0,4},[ \t]{0,32}["']`;
  // The name first, its line's start looked back for: a pattern that may start anywhere costs its scan every character.
  const redis = String.raw`(?:requirepass|masterauth)(?<=(?<![^\n])[ \t]{0,16}(?:requirepass|masterauth))[ \t]{1,16}["']?`;
  const quoted = String.raw`(?<=["'])[^"'\n\\]{1,1024}(?=["'])`;
  const core = `(${sql}|${define}|${redis})(${quoted}|(?<![\"'])${value(1)})`;
  return { kind: 'secret', regex: new RegExp(core, 'g'), keep: 1, passwordAfter: true, loose: String.raw`identified|define\(|requirepass|masterauth|password[ \t]{1,4}["']` };
}
