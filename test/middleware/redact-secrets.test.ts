import { redactSecrets } from '../../src/middleware';

const PEM = ['-----BEGIN RSA PRIVATE KEY-----', 'MIIEowIBAAKCAQEAx4UbaDzY2Y6H1hQx9Vxj0uT3b3c5u1d2Q9s8rT7w5e', 'Yz8Tq1nK3pL0vR2sU4wX6yZ8aB0cD2eF4gH6iJ8kL0mN2oP4qR6sT8uV0wX2', '-----END RSA PRIVATE KEY-----'].join('\n');

test.each<[string, string, string]>([
  ['bearer', 'Authorization: Bearer abcDEF123456789xyz.tok', 'Authorization: Bearer [REDACTED:bearer]'],
  ['authorization', 'authorization: Basic dXNlcjpwYXNzd29yZA==', 'authorization: Basic [REDACTED:authorization]'],
  ['sk- api key', 'key is sk-proj-AbCdEfGhIjKlMnOpQrStUvWx1234 ok', 'key is [REDACTED:api_key] ok'],
  ['stripe key', 'sk_live_51HqLyjWDarjtT1zdp7dcXYZ', '[REDACTED:api_key]'],
  ['api_key=', 'GET /v1?api_key=abcd1234efgh5678&q=paris', 'GET /v1?api_key=[REDACTED:api_key]&q=paris'],
  ['x-api-key header', 'x-api-key: Zm9vYmFyYmF6cXV4', 'x-api-key: [REDACTED:api_key]'],
  ['apiKey in JSON', '{"apiKey": "abcdefgh12345678", "city": "Paris"}', '{"apiKey": "[REDACTED:api_key]", "city": "Paris"}'],
  ['AWS access key id', 'id=AKIAIOSFODNN7EXAMPLE;', 'id=[REDACTED:aws_access_key];'],
  ['AWS secret key', 'aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n', 'aws_secret_access_key = [REDACTED:aws_secret_key]\n'],
  ['PEM private key', `before\n${PEM}\nafter`, 'before\n[REDACTED:private_key]\nafter'],
  ['PEM private key in JSON', JSON.stringify({ key: PEM, n: 1 }), '{"key":"[REDACTED:private_key]","n":1}'],
  ['truncated PEM private key', '{"key":"-----BEGIN OPENSSH PRIVATE KEY-----\\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ", "n": 1}', '{"key":"[REDACTED:private_key]", "n": 1}'],
  ['JWT', 'token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U end', 'token [REDACTED:jwt] end'],
  ['GitHub token', 'ghp_1234567890abcdefghijklmnopqrstuvwxyzAB', '[REDACTED:github_token]'],
  ['GitHub fine-grained token', 'github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz', '[REDACTED:github_token]'],
  ['Slack token', 'SLACK=xoxb-1234567890-0987654321-AbCdEfGhIjKl', 'SLACK=[REDACTED:slack_token]'],
  ['password field', 'password=hunter2hunter2 user=bob', 'password=[REDACTED:secret] user=bob'],
  ['client secret in JSON', '"client_secret":"8Q~abc.def_ghij1234"', '"client_secret":"[REDACTED:secret]"'],
  ['long high-entropy string', 'blob: 9fT2kQ7xLm4ZpR8vW1nB6cY3hJ0sD5gA7eK2uP9q done', 'blob: [REDACTED:high_entropy] done'],
  // Found in review: `\b` is not there after `_`, so prefixed names went through; plain token,
  // secret and credentials keys, and a URL's password, had no pattern.
  ['an environment password', 'POSTGRES_PASSWORD=correcthorsebattery', 'POSTGRES_PASSWORD=[REDACTED:secret]'],
  ['an environment token', 'export GITHUB_TOKEN=abcd1234efgh5678', 'export GITHUB_TOKEN=[REDACTED:secret]'],
  ['a prefixed password in JSON', '{"DB_PASSWORD": "Tr0ub4dor-and-3-more"}', '{"DB_PASSWORD": "[REDACTED:secret]"}'],
  ['a prefixed API key', 'STRIPE_API_KEY=abcd1234efgh5678', 'STRIPE_API_KEY=[REDACTED:api_key]'],
  ['a token key', '{"token": "abcd1234efgh5678ijkl"}', '{"token": "[REDACTED:secret]"}'],
  ['a credentials key', '{"credentials": "abcdefgh12345"}', '{"credentials": "[REDACTED:secret]"}'],
  ['a URL password', 'postgres://admin:S3cr3tPassw0rd@db.internal/app', 'postgres://admin:[REDACTED:secret]@db.internal/app'],
])('%s', (_kind, input, expected) => {
  expect(redactSecrets(input)).toBe(expected);
});

test.each([
  ['a SHA-256 hex digest', 'sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
  ['a UUID', 'id 123e4567-e89b-12d3-a456-426614174000'],
  ['a git commit', 'commit 9fceb02d0ae598e95dc970b74767f19372d61af8'],
  ['a URL path', 'GET https://api.example.com/api/v1/users/12345/orders/67890/items'],
  ['a file path', '/home/user/projects/dispatch/src/pipeline/run-attempt2.ts'],
  ['prose about tokens', 'Bearer tokens map to a tenant; the api key lives in the vault; password rules apply.'],
  ['a long identifier', 'this_is_a_very_long_function_name_without_digits_here'],
  ['a certificate header alone', '-----BEGIN PUBLIC KEY-----'],
  ['short text', 'sk-1'],
  ['pagination tokens', '{"next_token": "abcd1234efgh5678ijkl", "page_token": "CAoQAA12345", "NextToken": "abcdefghijk123"}'],
  ['words ending in token', 'tokens=abcdefghijkl'],
  ['a URL with a user and no password', 'https://user@example.com/x and http://example.com:8080/path'],
])('keeps %s', (_what, text) => {
  expect(redactSecrets(text)).toBe(text);
});

test('every pattern stays linear on hostile output (1 MB each well under a second)', () => {
  const hostile = [
    'a'.repeat(1_000_000),
    'eyJ'.concat('a'.repeat(1_000_000)),
    'api_key'.concat(' '.repeat(1_000_000)),
    `${'api_key '.repeat(10)}${'x'.repeat(7)} `.repeat(10_000),
    '-----BEGIN '.repeat(100_000),
    '-----BEGIN A PRIVATE KEY-----'.repeat(40_000),
    'Bearer '.concat('a'.repeat(7), ' ').repeat(60_000),
    `${'b'.repeat(31)} `.repeat(30_000),
    'aws_secret_access_key='.concat('A'.repeat(39), ' ').repeat(15_000),
    'x://'.concat('a'.repeat(250), ':', 'b'.repeat(250), ' ').repeat(2_000),
    'https://'.repeat(120_000),
    '_token_token_token:'.repeat(50_000),
    'next_'.repeat(200_000).concat('token=abcdefgh12345'),
  ];
  for (const text of hostile) {
    const started = performance.now();
    redactSecrets(text);
    expect(performance.now() - started).toBeLessThan(1500);
  }
});
