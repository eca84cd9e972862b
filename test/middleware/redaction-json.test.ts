import fc from 'fast-check';
import { redactSecrets } from '../../src/middleware';
import type { ToolRoute } from '../helpers/servers';
import { startToolApp, type ToolApp } from './redaction-service';

// Found in review: the value of a key named like a secret ran to the next quote, space or comma,
// so `{"session":{"token":12345678}}` lost its closing braces and reached the model as invalid JSON
// (isError false, even from a returns_json tool: redaction runs after result verification).
const PEM = '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx4UbaDzY2Y6H1hQx9Vxj0uT3b3c5u1d2Q9s8rT7w5e\n-----END RSA PRIVATE KEY-----';

test.each<[string, string, string]>([
  ['a number under a secret key, nested', '{"user":"bob","session":{"token":12345678}}', '{"user":"bob","session":{"token":"[REDACTED:secret]"}}'],
  ['a number under a password key, first', '{"password":123456789,"user":"bob"}', '{"password":"[REDACTED:secret]","user":"bob"}'],
  ['a string in an array of objects', '[{"api_key": "abcd1234efgh5678"}, {"n": 1}]', '[{"api_key": "[REDACTED:api_key]"}, {"n": 1}]'],
  ['a key-value inside a string value', '{"log":"token=abcdefgh12345678}"}', '{"log":"token=[REDACTED:secret]}"}'],
  // The BEGIN of one string and the END of another are not one block.
  ['a cut-short PEM before another string with an END', `{"a":"-----BEGIN RSA PRIVATE KEY-----\\nMIIEow","b":"-----END RSA PRIVATE KEY-----"}`, '{"a":"[REDACTED:private_key]","b":"-----END RSA PRIVATE KEY-----"}'],
  ['a URL whose "password" would span two strings', '{"a":"ab://u:","b":"c@d"}', '{"a":"ab://u:","b":"c@d"}'],
  // What is not redacted stays to the character: whitespace, escapes, numbers past 2^53.
  ['formatting and big numbers', '{\n  "id": 12345678901234567890,\n  "s": "caf\\u00e9",\n  "password": "hunter2hunter2"\n}', '{\n  "id": 12345678901234567890,\n  "s": "caf\\u00e9",\n  "password": "[REDACTED:secret]"\n}'],
  // Outputs that are not one JSON document (JSON lines) are redacted as text, still line by line JSON.
  ['JSON lines', '{"token":12345678}\n{"a":[{"token":87654321}]}', '{"token":"[REDACTED:secret]"}\n{"a":[{"token":"[REDACTED:secret]"}]}'],
  ['a value with balanced brackets in text', 'password=ab(cd)efghij user=bob', 'password=[REDACTED:secret] user=bob'],
  ['a value closed by a bracket it did not open', 'f(token=abcdefgh12).then(x)', 'f(token=[REDACTED:secret]).then(x)'],
])('%s', (_what, input, expected) => {
  expect(redactSecrets(input)).toBe(expected);
});

// Found in review: an output whose secrets showed only once its JSON escapes were decoded was
// never read as JSON (the text pass changed nothing, so the JSON pass was skipped): PHP's
// json_encode writes `/` as `\/`, and a connection string's password reached the model.
test.each<[string, string, string]>([
  ['a URL password behind escaped slashes (PHP)', '{"dsn":"postgres:\\/\\/admin:S3cretPassw0rd@db.example.com\\/app"}', '{"dsn":"postgres://admin:[REDACTED:secret]@db.example.com/app"}'],
  ['an AWS secret key holding escaped slashes', '{"aws_secret_access_key":"wJalrXUtnFEMI\\/K7MDENG\\/bPxRfiCYEXAMPLEKEY"}', '{"aws_secret_access_key":"[REDACTED:secret]"}'],
  ['a password key written with a \\u escape', '{"pass\\u0077ord":"correcthorse1"}', '{"pass\\u0077ord":"[REDACTED:secret]"}'],
])('escaped JSON: %s', (_what, input, expected) => {
  expect(redactSecrets(input)).toBe(expected);
});

test('escaped JSON holding no secret is kept to the character', () => {
  const text = '{"path":"\\/usr\\/local\\/bin","s":"caf\\u00e9"}';
  expect(redactSecrets(text)).toBe(text);
});

// Found in review: text that is not one JSON document (JSON lines, an SSE stream, a log line
// quoting an object, a JSON output cut short) was read only as written, so the same escapes still
// hid its secrets: its lines holding JSON are now read as JSON too, and a URL's password is found
// behind escaped slashes anywhere.
test.each<[string, string, string]>([
  ['a URL password behind escaped slashes, in JSON lines', '{"dsn":"postgres:\\/\\/admin:S3cretPassw0rd@db\\/app"}\n{"x":1}', '{"dsn":"postgres://admin:[REDACTED:secret]@db/app"}\n{"x":1}'],
  ['a password key written with a \\u escape, in JSON lines', '{"x":1}\r\n{"pass\\u0077ord":"correcthorse1"}\r\n', '{"x":1}\r\n{"pass\\u0077ord":"[REDACTED:secret]"}\r\n'],
  ['a token after an escaped & (Go), in JSON lines', '{"url":"https://api.example.com/v1?a=1\\u0026token=abcd1234efgh"}\n{"x":1}', '{"url":"https://api.example.com/v1?a=1&token=[REDACTED:secret]"}\n{"x":1}'],
  ['an object quoted in a log line', '[2026-01-01T10:00:00Z] INFO loaded {"pass\\u0077ord":"correcthorse1"} in 3 ms', '[2026-01-01T10:00:00Z] INFO loaded {"pass\\u0077ord":"[REDACTED:secret]"} in 3 ms'],
  ['an array of objects in a line', 'rows: [{"pass\\u0077ord":"correcthorse1"},{"n":2}]\ndone', 'rows: [{"pass\\u0077ord":"[REDACTED:secret]"},{"n":2}]\ndone'],
  ['an SSE data line', 'event: config\ndata: {"pass\\u0077ord":"correcthorse1"}\n\n', 'event: config\ndata: {"pass\\u0077ord":"[REDACTED:secret]"}\n\n'],
  ['a PHP JSON output cut short (no JSON at all)', '{"dsn":"postgres:\\/\\/admin:S3cretPassw0rd@db\\/app","rows":[{"id":1},{"id', '{"dsn":"postgres:\\/\\/admin:[REDACTED:secret]@db\\/app","rows":[{"id":1},{"id'],
])('escaped JSON in other text: %s', (_what, input, expected) => {
  expect(redactSecrets(input)).toBe(expected);
});

test('escaped JSON lines and log lines holding no secret are kept to the character', () => {
  const text = '{"path":"\\/usr\\/local\\/bin","s":"caf\\u00e9"}\n[info] {"url":"https:\\/\\/example.com\\/a"} C:\\users\\bob {\n{"bad":"\\/"';
  expect(redactSecrets(text)).toBe(text);
});

const SECRETISH = [
  PEM,
  PEM.slice(0, 60),
  '-----END RSA PRIVATE KEY-----',
  'token=abcd1234efgh5678}',
  'password: hunter2hunter2]',
  'Authorization: Bearer abcDEF123456789xyz',
  'x://user:',
  'p@ss@host',
  'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
  'ghp_1234567890abcdefghijklmnopqrstuvwxyzAB',
  '9fT2kQ7xLm4ZpR8vW1nB6cY3hJ0sD5gA7eK2uP9q',
  JSON.stringify({ password: 'hunter2hunter2', n: 12345678 }),
];
const key = fc.constantFrom('password', 'token', 'api_key', 'DB_PASSWORD', 'next_token', 'id', 'config', 'log');
const leaf = fc.oneof(fc.constantFrom(...SECRETISH), fc.string(), fc.integer(), fc.constant(12345678901), fc.boolean(), fc.constant(null));
const { value } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, leaf, fc.array(tie('value'), { maxLength: 4 }), fc.dictionary(key, tie('value'), { maxKeys: 4 })),
}));

test('any JSON document stays JSON, redacted again unchanged (property)', () => {
  fc.assert(
    fc.property(value, fc.constantFrom(undefined, 2), (doc, indent) => {
      const redacted = redactSecrets(JSON.stringify(doc, null, indent));
      expect(() => JSON.parse(redacted)).not.toThrow();
      expect(redactSecrets(redacted)).toBe(redacted);
    }),
    { numRuns: 500 },
  );
});

test('JSON lines stay JSON line by line (property)', () => {
  fc.assert(
    fc.property(fc.array(fc.dictionary(key, leaf, { maxKeys: 4 }), { minLength: 2, maxLength: 4 }), (docs) => {
      const redacted = redactSecrets(docs.map((d) => JSON.stringify(d)).join('\n'));
      for (const line of redacted.split('\n')) expect(() => JSON.parse(line)).not.toThrow();
    }),
    { numRuns: 300 },
  );
});

// PHP's json_encode writes every `/` as `\/`: still JSON, line by line, after redaction.
test('JSON lines with escaped slashes stay JSON line by line, their secrets redacted (property)', () => {
  const dsn = fc.constant('postgres://admin:S3cretPassw0rd@db/app');
  fc.assert(
    fc.property(fc.array(fc.dictionary(key, fc.oneof(leaf, dsn), { maxKeys: 4 }), { minLength: 2, maxLength: 4 }), (docs) => {
      const lines = docs.map((d) => JSON.stringify(d).replace(/\//g, '\\/'));
      const redacted = redactSecrets(lines.join('\n'));
      for (const line of redacted.split('\n')) expect(() => JSON.parse(line)).not.toThrow();
      expect(redacted).not.toContain('S3cretPassw0rd');
    }),
    { numRuns: 300 },
  );
});

describe('through the gRPC service', () => {
  let d: ToolApp;
  beforeAll(async () => {
    const json: ToolRoute = (_req, res) => void res.writeHead(200).end('{"user":"bob","session":{"token":12345678}}');
    d = await startToolApp({ '/json': json }, (url) => `  - { name: get_json, effect: read_only, returns_json: true, input_schema: '{"type":"object"}', http: { url: "${url}/json" } }`);
  });
  afterAll(() => d.close());

  test('a returns_json tool answering a secret number reaches the model as JSON, the number redacted', async () => {
    const res = await d.app.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'j', name: 'get_json', arguments: '{}' }] });
    expect(res.results[0]).toMatchObject({ isError: false, output: '{"user":"bob","session":{"token":"[REDACTED:secret]"}}' });
    expect(JSON.parse(res.results[0]!.output)).toEqual({ user: 'bob', session: { token: '[REDACTED:secret]' } });
  });
});
