import { redactSecrets } from '../../src/middleware';

// Found in review: secrets under keys the patterns did not name, or in a form they did not know,
// reached the model whole. Rails' secret_key_base (hex, which the entropy step keeps as a hash),
// a signing or encryption key, and a Slack incoming webhook, whose last part (24 characters) is
// too short for the entropy step while its whole path is the credential.
test.each<[string, string, string]>([
  ['secret_key_base in YAML', 'production:\n  secret_key_base: 8a2f4c6e8b0d2f4a6c8e0b2d4f6a8c0e2b4d6f8a', 'production:\n  secret_key_base: [REDACTED:secret]'],
  ['SECRET_KEY_BASE in an environment', 'SECRET_KEY_BASE=8a2f4c6e8b0d2f4a6c8e0b2d4f6a8c0e ./bin/rails s', 'SECRET_KEY_BASE=[REDACTED:secret] ./bin/rails s'],
  ['secret_key_base in JSON', '{"secret_key_base":"8a2f4c6e8b0d2f4a6c8e0b2d4f6a8c0e"}', '{"secret_key_base":"[REDACTED:secret]"}'],
  ['a signing key', 'signing_key: 3kF9sLq2Xv8Zp1Rt', 'signing_key: [REDACTED:secret]'],
  ['an encryption key in JSON', '{"encryptionKey":"Zx8c7V6b5N4m3L2k"}', '{"encryptionKey":"[REDACTED:secret]"}'],
  ['a Slack webhook', 'curl -X POST https://hooks.slack.com/services/T024BE7LD/B01234ABCDE/abcdEFGH1234ijklMNOP5678 -d @m.json', 'curl -X POST https://hooks.slack.com/services/[REDACTED:slack_token] -d @m.json'],
  ['a Slack webhook in JSON with escaped slashes', '{"url":"https:\\/\\/hooks.slack.com\\/services\\/T024BE7LD\\/B01234ABCDE\\/abcdEFGH1234ijklMNOP5678"}', '{"url":"https://hooks.slack.com/services/[REDACTED:slack_token]"}'],
])('%s', (_what, input, expected) => {
  expect(redactSecrets(input)).toBe(expected);
});

test.each<[string, string]>([
  ['an algorithm under an encryption key', 'encryption_key: AES256'],
  ['an id beside a signing key', 'signing_key_id: abcdefgh12345'],
  ['a page about webhooks', 'see https://api.slack.com/messaging/webhooks (T024BE7LD is a team id)'],
  ['a webhook placeholder', 'SLACK_WEBHOOK_URL=https://hooks.slack.com/services/...'],
])('kept: %s', (_what, input) => {
  expect(redactSecrets(input)).toBe(input);
});

// Found in review: token formats whose body is hex (kept by the entropy step as a hash) or of an
// alphabet the entropy step does not read as random, and passwords given on a command line.
test.each<[string, string, string]>([
  ['a DigitalOcean token', `DO_TOKEN=dop_v1_${'8a2f4c6e'.repeat(8)}`, 'DO_TOKEN=[REDACTED:api_key]'],
  ['a Shopify token', 'X-Shopify-Access-Token: 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', 'X-Shopify-Access-Token: [REDACTED:api_key]'],
  ['an age private key', '# public key: age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p\nAGE-SECRET-KEY-1QYZ9RPGVN7HZ62JTMX8FE0KLA4D3SWUC5QYZ9RPGVN7HZ62JTMX8FE0KLA\n', '# public key: age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p\n[REDACTED:private_key]\n'],
  ['docker login -p', 'docker login -u admin -p S3cr3tPass registry.example.com', 'docker login -u admin -p [REDACTED:secret] registry.example.com'],
  ['podman login -p', 'podman login registry.io -u me -p S3cr3t', 'podman login registry.io -u me -p [REDACTED:secret]'],
  ['curl -u user:password', 'curl -s -u admin:S3cr3tPass https://api.example.com', 'curl -s -u admin:[REDACTED:secret] https://api.example.com'],
  ['curl --user=user:password, quoted', 'curl --user="admin:S3cr3t" https://x', 'curl --user="admin:[REDACTED:secret]" https://x'],
])('%s', (_what, input, expected) => {
  expect(redactSecrets(input)).toBe(expected);
});

test.each<[string, string]>([
  ['a hex token with more hex after it', '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1'],
  ['curl with a user only (it prompts)', 'curl -u admin https://x'],
  ['curl with a variable for the password', 'curl -u admin:$API_PASSWORD https://x'],
  ['docker login with a variable', 'docker login -u me -p $TOKEN'],
  ["docker run's -p (a port)", 'docker run -p 8080:80 nginx'],
  ['-u of another command', 'ssh -u root:abc host'],
])('kept: %s', (_what, input) => {
  expect(redactSecrets(input)).toBe(input);
});

// Found in review: Docker's config.json keeps each registry's credentials as `"auth"`, base64 of
// `user:password` (24 characters for a short pair: too short for the entropy step), under a key the
// patterns did not name.
test.each<[string, string, string]>([
  ["Docker's config.json", '{"auths":{"https://index.docker.io/v1/":{"auth":"YWRtaW46UzNjcjN0UGFzcw=="}}}', '{"auths":{"https://index.docker.io/v1/":{"auth":"[REDACTED:authorization]"}}}'],
  ['basic_auth in YAML', 'basic_auth: admin:S3cr3tPass', 'basic_auth: [REDACTED:authorization]'],
  ['an Auth header with a scheme', 'Auth: Basic YWRtaW46cGFzcw==', 'Auth: Basic [REDACTED:authorization]'],
])('%s', (_what, input, expected) => {
  expect(redactSecrets(input)).toBe(expected);
});

test.each<[string, string]>([
  ['an auth method', '{"auth":"client_credentials"}'],
  ['an auth object', '{"auth": {"type": "basic"}}'],
  ['a placeholder', 'auth: required'],
  ['oauth', 'oauth: abcdefgh12345'],
])('kept: %s', (_what, input) => {
  expect(redactSecrets(input)).toBe(input);
});

// Found in review: an S3 presigned URL kept its signature (64 hex characters: the entropy step keeps
// hex as a hash) and lost the name of its algorithm parameter, whose whole `key=value` run became
// the entropy step's marker. The signature is the credential, as Azure's `sig` is; a random run that
// is `key=value` keeps its key.
test.each<[string, string, string]>([
  [
    'an S3 presigned URL',
    'https://b.s3.amazonaws.com/f.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=3600&X-Amz-Signature=fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024',
    'https://b.s3.amazonaws.com/f.pdf?X-Amz-Algorithm=[REDACTED:high_entropy]&X-Amz-Expires=3600&X-Amz-Signature=[REDACTED:secret]',
  ],
  ['a GCS signed URL', 'https://storage.googleapis.com/b/o?X-Goog-Expires=900&X-Goog-Signature=8a2f4c6e8b0d2f4a6c8e0b2d4f6a8c0e2b4d', 'https://storage.googleapis.com/b/o?X-Goog-Expires=900&X-Goog-Signature=[REDACTED:secret]'],
  ['a random value after its key in a query', 'q?session=Xk9mP2qL7vR4tY8wZ3nB6cF1hJ5sD0gA7eK2uP9q&x=1', 'q?session=[REDACTED:high_entropy]&x=1'],
  ['base64 with its padding, no key', 'aGVsbG8gd29ybGQgdGhpcyBpcyBhIHRlc3Q9fT2kQ7xLm4Z==', '[REDACTED:high_entropy]'],
])('%s', (_what, input, expected) => {
  expect(redactSecrets(input)).toBe(expected);
});
