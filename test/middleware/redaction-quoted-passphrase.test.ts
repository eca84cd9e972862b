import { redactSecrets } from '../../src/middleware';

// Found in review: a password's value stopped at its first space, so a passphrase of words in
// quotes (.env files, shells, YAML) went out whole, each word under 8 characters, or with all but
// its first word: `SMTP_PASSWORD="correct horse battery staple"` reached the model as written.

test.each([
  ['a .env line', 'SMTP_PASSWORD="correct horse battery staple"\nNEXT=1', 'SMTP_PASSWORD="[REDACTED:secret]"\nNEXT=1'],
  ['YAML in single quotes', "passphrase: 'my pass phrase'", "passphrase: '[REDACTED:secret]'"],
  ['a shell export holding the other quote', `export PGPASSWORD='it is "mine" ok'`, "export PGPASSWORD='[REDACTED:secret]'"],
  ['a camelCase key', 'dbPassword: "two words here"', 'dbPassword: "[REDACTED:secret]"'],
  ['a first word of 8 or more (its tail went out before)', 'password: "correct-horse battery"', 'password: "[REDACTED:secret]"'],
  ['spaced separator, then more text', 'db_pwd = "sesame open now" # rotated', 'db_pwd = "[REDACTED:secret]" # rotated'],
  // These three were kept while a password under 8 characters was (redaction-short-passwords.test.ts).
  ['a value under 8 characters', 'password: "a b c"', 'password: "[REDACTED:secret]"'],
  ['a quote never closed on its line: its first word only, the next line kept', 'password: "abc def\nghi"', 'password: "[REDACTED:secret] def\nghi"'],
  ['a value closed, then other quotes kept', 'db_password = "ab"  and "rest of the text"', 'db_password = "[REDACTED:secret]"  and "rest of the text"'],
])('a quoted passphrase of words is redacted whole: %s', (_what, text, expected) => {
  expect(redactSecrets(text)).toBe(expected);
});

test.each([
  ['a JSON validation message (quoted key)', '{"errors":{"password":"is too short (minimum is 8 characters)"}}'],
  ['a reference', 'password: "$HOME dir value"'],
  ['a word that only starts like the key', 'passwords: "not a key here"'],
])('kept: %s', (_what, text) => {
  expect(redactSecrets(text)).toBe(text);
});
