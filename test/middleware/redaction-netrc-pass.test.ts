import { redactSecrets } from '../../src/middleware';

// Found in review: a .netrc's password (`machine h login u password p`, one line or several: curl,
// git and ftp read it) has a space after its key, which the patterns took for a sentence's, and
// environment names ending in `_PASS` (RabbitMQ's image reads RABBITMQ_DEFAULT_PASS; DB_PASS,
// SMTP_PASS) named no password: both reached the model whole.
test.each<[string, string, string]>([
  ['a .netrc line', 'machine example.com login bob password S3cr3tPass', 'machine example.com login bob password [REDACTED:secret]'],
  ['a .netrc entry on several lines', 'machine api.example.com\n  login bob\n  password S3cr3tPass\nmachine b', 'machine api.example.com\n  login bob\n  password [REDACTED:secret]\nmachine b'],
  ['DB_PASS', 'DB_PASS=S3cr3tPass', 'DB_PASS=[REDACTED:secret]'],
  ['RABBITMQ_DEFAULT_PASS in YAML', 'env:\n  RABBITMQ_DEFAULT_PASS: guest2\n', 'env:\n  RABBITMQ_DEFAULT_PASS: [REDACTED:secret]\n'],
  ['a word under smtp-pass', 'smtp-pass: hunter', 'smtp-pass: [REDACTED:secret]'],
  ['DB_PASS in JSON', '{"DB_PASS":"hunter2"}', '{"DB_PASS":"[REDACTED:secret]"}'],
])('%s', (_what, input, expected) => {
  expect(redactSecrets(input)).toBe(expected);
});

test.each<[string, string]>([
  ['prose with the word password', 'Enter your login name and password below'],
  ['a login then a sentence', 'login failed: password is incorrect'],
  ['pass alone (a test count)', 'pass: 10'],
  ['a bypass', 'bypass: S3cr3tPass'],
  ['a variable under DB_PASS', 'DB_PASS=$DB_PASS'],
  ['a name that goes on', 'DB_PASSTHROUGH=enabled'],
])('kept: %s', (_what, input) => {
  expect(redactSecrets(input)).toBe(input);
});

// Found in review: a `_pass` key is as often a test report's count or verdict as a password.
test.each<[string, string]>([
  ['a count', '{"tests_pass": 10, "tests_fail": 0}'],
  ['a flag in an environment', 'LINT_PASS=1'],
  ['a verdict', '{"all_pass": "yes"}'],
])('kept under a _pass key: %s', (_what, input) => {
  expect(redactSecrets(input)).toBe(input);
});

test.each<[string, string, string]>([
  ['a longer number', 'DB_PASS=123456', 'DB_PASS=[REDACTED:secret]'],
  ['a word', 'DB_PASS=hunter', 'DB_PASS=[REDACTED:secret]'],
  ['a short number under password (not a _pass key)', '{"password": 10}', '{"password": "[REDACTED:secret]"}'],
])('still redacted: %s', (_what, input, expected) => {
  expect(redactSecrets(input)).toBe(expected);
});

