import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { redactSecrets, SECRET_PATTERNS } from '../../src/middleware';
import { anyPatternMatches, holdsPatternLiteral } from '../../src/middleware/secret-prefilter';

// The prefilter (secret-prefilter.ts) skips every pattern's scan for a text holding none of their
// literals: it must never skip a text one of them may match, or that secret reaches the model.

/** Whether any pattern, by its loose pre-check or its words, may match `text`: what the prefilter must not miss. */
const anyMayMatch = (text: string): boolean => anyPatternMatches(text) || SECRET_PATTERNS.some((p) => p.words?.test(text) === true);

/** A secret for each entry of SECRET_PATTERNS, by index (the kind is a reminder). */
const EXAMPLES: ReadonlyArray<readonly [string, string]> = [
  ['jwt', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U'],
  ['github_token', 'ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789'],
  ['slack_token', 'xoxb-1234567890-abcdefghij'],
  ['webhook', `https://discord.com/api/webhooks/123456789012345678/${'aB3'.repeat(20)}`],
  ['aws_access_key', 'AKIAIOSFODNN7EXAMPLE'],
  ['aws_secret_key', 'aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'],
  ['api_key', 'sk-a1b2a1b2a1b2a1b2a1b2a1b2'],
  ['private_key', `AGE-SECRET-KEY-1${'QZ'.repeat(29)}`],
  ['bearer', 'Bearer abcdefgh12345678'],
  ['authorization', 'Authorization: Basic dXNlcjpwYXNz'],
  ['authorization', 'authorization=abcd1234efgh'],
  ['secret', 'SMTP_PASSWORD="correct horse battery staple"'],
  ['secret', 'password=hunter2'],
  ['api_key', 'api_key=abcd1234efgh5678'],
  ['secret', 'client_secret=abcd1234efgh5678'],
  ['secret', '<add value="hunter2x" key="Password"/>'],
  ['secret', 'sshpass -p hunter2 ssh host'],
  ['secret', 'db.internal:5432:app:admin:S3cret'],
  ['secret', 'postgres://admin:S3cret@db/app'],
  ['secret', "CREATE USER app IDENTIFIED BY 'pw123'"],
];

test('every pattern has an example', () => {
  expect(EXAMPLES.map(([kind]) => kind)).toEqual(SECRET_PATTERNS.map((p) => p.kind));
});

test.each(EXAMPLES.map(([kind, example], i) => [i, kind, example] as const))('pattern %i (%s): its example passes the prefilter, in any case', (i, _kind, example) => {
  const { regex } = SECRET_PATTERNS[i]!;
  regex.lastIndex = 0;
  expect(regex.test(example)).toBe(true);
  regex.lastIndex = 0;
  expect(redactSecrets(example)).not.toBe(example);
  for (const text of [example, example.toUpperCase(), example.toLowerCase(), `{"out":${JSON.stringify(`x ${example} y`)}}`]) {
    if (anyMayMatch(text)) expect([text, holdsPatternLiteral(text)]).toEqual([text, true]);
  }
});

// Strings made of the patterns' pieces and near misses, other letters, and characters whose case
// folds to an ASCII letter's (`ſ`, the Kelvin sign, `İ`): a text the prefilter passes over holds nothing any pattern may match.
const PIECES = ['eyJ', 'gh', 'p_', 'xox', 'b-', 'AKIA', 'secret', '_access_', 'key', 'sk-', 'k_live_', 'AIza', 'glpat-', 'dop_v1_', 'shpat_', 'Bearer ', 'Auth', 'orization', 'pass', 'word', 'pwd', 'Token', 'credential', 'api_', '=', ':', ': ', '"', "'", ' ', '\n', '\\n', '@', '/', '//', 'sig=', 'X-Amz-Signature=', 'name="', 'value="', '<', '>', 'sshpass -p ', 'curl -u ', 'docker login -p ', 'mysql -p', ':5432:', ':*:', 'identified by ', 'define(', '/webhooks/', '/trigger/', 'hooks.slack.com/services/', 'ſ', '\u212a', 'İ', 'a', 'Z', '0', '12345678', 'abcdefgh'];
test('a text without any pattern literal holds nothing a pattern may match (property)', () => {
  const text = fc.array(fc.oneof(fc.constantFrom(...PIECES), fc.string({ maxLength: 3 })), { maxLength: 24 }).map((parts) => parts.join(''));
  fc.assert(fc.property(text, (t) => holdsPatternLiteral(t) || !anyMayMatch(t)), { numRuns: 20_000 });
});

test('every string of the redaction tests that a pattern may match passes the prefilter', () => {
  const dir = __dirname;
  const texts = new Set<string>();
  for (const file of readdirSync(dir).filter((f) => /^redact.*\.test\.ts$/.test(f))) {
    const source = readFileSync(path.join(dir, file), 'utf8');
    for (const m of source.matchAll(/'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)"|`((?:[^`\\$]|\\.)*)`/g)) {
      const raw = m[1] ?? m[2] ?? m[3] ?? '';
      try {
        texts.add(JSON.parse(`"${raw.replace(/\\'/g, "'").replace(/\\`/g, '`').replace(/(?<!\\)"/g, '\\"')}"`) as string);
      } catch {
        texts.add(raw);
      }
    }
  }
  const missed = [...texts].filter((t) => anyMayMatch(t) && !holdsPatternLiteral(t));
  expect(texts.size).toBeGreaterThan(500);
  expect(missed).toEqual([]);
});
