import { redactSecrets } from '../../src/middleware';

// Found by probing with secrets as real tools print them: the AWS CLI's and STS's JSON
// (`"SecretAccessKey": ...`) lost its secret key whenever the key held more than two slashes (one
// key in 25), as the JSON pass did not know the name and the entropy step takes such a run for a
// path; and the hex keys services name by key names the patterns did not know (Datadog's
// application key, New Relic's license key, Cloudflare's X-Auth-Key, Azure API Management's
// subscription key, Meilisearch's master key) reached the model whole, hex being kept as a hash.
const AWS_SECRET = 'mN/Tew/w/jjzJbgd7qs9cS+WOBLv3D2AgPYPY6ZW';

test.each<[string, string, string]>([
  [
    "STS's credentials, as the AWS CLI prints them",
    `{\n  "Credentials": {\n    "AccessKeyId": "ASIAIOSFODNN7EXAMPLE",\n    "SecretAccessKey": "${AWS_SECRET}",\n    "Expiration": "2026-12-06T10:00:00Z"\n  }\n}`,
    '{\n  "Credentials": {\n    "AccessKeyId": "[REDACTED:aws_access_key]",\n    "SecretAccessKey": "[REDACTED:secret]",\n    "Expiration": "2026-12-06T10:00:00Z"\n  }\n}',
  ],
  ['aws_secret_access_key in JSON', `{"aws_secret_access_key": "${AWS_SECRET}"}`, '{"aws_secret_access_key": "[REDACTED:secret]"}'],
  ['secretAccessKey in JSON (the SDKs)', `{"accessKeyId":"AKIAIOSFODNN7EXAMPLE","secretAccessKey":"${AWS_SECRET}"}`, '{"accessKeyId":"[REDACTED:aws_access_key]","secretAccessKey":"[REDACTED:secret]"}'],
  ["Datadog's application key in a header", 'curl -H "DD-APPLICATION-KEY: f7a822036a3779d1f1d884475093faca6d447bee" https://api.datadoghq.com/api/v1/validate', 'curl -H "DD-APPLICATION-KEY: [REDACTED:secret]" https://api.datadoghq.com/api/v1/validate'],
  ["Datadog's application key in a query", '?api_key=1d2e3f4a5b6c7d8e&application_key=f7a822036a3779d1f1d884475093faca6d447bee', '?api_key=[REDACTED:api_key]&application_key=[REDACTED:secret]'],
  ["New Relic's license key in YAML", "common:\n  license_key: '7ed27c84501e50038d7b6ee31dec656258d2NRAL'", "common:\n  license_key: '[REDACTED:secret]'"],
  ["New Relic's license key in an environment", 'NEW_RELIC_LICENSE_KEY=7ed27c84501e50038d7b6ee31dec656258d2NRAL', 'NEW_RELIC_LICENSE_KEY=[REDACTED:secret]'],
  ["Cloudflare's global key", '-H "X-Auth-Email: a@b.c" -H "X-Auth-Key: fca6450d10017f686505ecbbfb74acce0f810"', '-H "X-Auth-Email: a@b.c" -H "X-Auth-Key: [REDACTED:secret]"'],
  ["Azure API Management's subscription key", '-H "Ocp-Apim-Subscription-Key: aba44f0a3c611a73cc556d3e22783030"', '-H "Ocp-Apim-Subscription-Key: [REDACTED:secret]"'],
  ["Meilisearch's master key", 'MEILI_MASTER_KEY=e853d54b8e84265304f83e405cfcfdce513ae235', 'MEILI_MASTER_KEY=[REDACTED:secret]'],
])('%s', (_what, input, expected) => {
  expect(redactSecrets(input)).toBe(expected);
});

test.each<[string, string]>([
  ['an id beside a master key', 'master_key_id: 1234567890abcdef'],
  ['a count of license keys', 'license_key_count: 4000000000'],
  ['a path to an auth key', 'auth_key_path=/etc/keys/auth.pem'],
  ['a subscription key left unset', 'Ocp-Apim-Subscription-Key: <your-key>'],
  ['a short word under an application key', '{"application_key": "none"}'],
])('kept: %s', (_what, input) => {
  expect(redactSecrets(input)).toBe(input);
});
