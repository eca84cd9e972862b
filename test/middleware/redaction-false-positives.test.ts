import { redactSecrets } from '../../src/middleware';
import type { ToolRoute } from '../helpers/servers';
import { errorJson } from '../guards/helpers';
import { startToolApp, type ToolApp } from './redaction-service';

// Found in review: the entropy step redacted what an agent must use as it is (pagination tokens
// docs/security.md promised to pass, ids, npm integrity hashes: 35,444 in one package-lock), and
// the key-value step rewrote source code (`const token = [REDACTED:secret];` in 12 of the 236
// files of src/), the working directory and a tokenizer's tokens.
test.each([
  ['camelCase pagination tokens', '{"NextToken":"AYADeJ2x3Fz1q0hWv8KpLmN4sT7uYbR6cE9gD2fH5jK8lP1oQ3wZ","Items":[]}'],
  ['a nextPageToken and a page_token', '{"nextPageToken":"CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA3eDdjNGM2MhAB","page_token":"Q2lBS0dqQnBORGQyTm1wMlptbDJjWFJ3WWpCcE9YQTM"}'],
  ['a cursor of base64 JSON', '{"cursor":"eyJsYXN0X2lkIjoxMjM0NTY3ODksInRzIjoxNzAwMDAwMDAwfQ==","has_more":true}'],
  ['a pagination token in a query', 'GET /v1/items?next_token=AYADeJ2x3Fz1q0hWv8KpLmN4sT7uYbR6cE9gD2fH5jK8&limit=50'],
  ['a Google Drive file id', '{"id":"1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms","name":"Budget"}'],
  ['a file id in text', 'file_id: 1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms'],
  ['an npm integrity hash', '"integrity": "sha512-Ck0xP0pDYFknvNqY9VxUvDrvDcjaTbfK0zkU7u5l1R3xYVvfDjF7w2Kz6Z7NbUn5hp2QiqSYGo5R9xmz0pTXZQ=="'],
  ['long identifiers with a digit', 'class AbstractSingletonProxyFactoryBean2Impl extends Base; test_redaction_handles_utf8_strings()'],
  ['an alphabet', "const ALPHABET = Buffer.from('0123456789ABCDEFGHJKMNPQRSTVWXYZ', 'latin1');"],
  ['the working directory', 'PWD=/home/alice/projects/app\nOLDPWD=/home/alice\nHOME=/home/alice'],
  ['a tokenizer token', '{"token":"understanding","logprob":-0.12}'],
  ['a word after credentials', "fetch(url, { credentials: 'same-origin' })"],
  ['variables and commands', 'TOKEN=$(openssl rand -hex 32); PASSWORD=${DB_PASSWORD}; export API_KEY="$SECRET_API_KEY"'],
  ['the name of a variable', "const source = flags.token !== undefined ? '--token' : 'DISPATCH_TOKEN';"],
  ['a URL usage line', 'redis://[:password@]host:port/db'],
  // Under an Authorization key: a scheme's name, a word, the OAuth grant named after it.
  ['authorization words', 'Authorization: Negotiate\n{"authorization":"required","grant_type":"authorization_code"}'],
])('keeps %s', (_what, text) => {
  expect(redactSecrets(text)).toBe(text);
});

test.each([
  ['a declaration', 'const token = header.slice(7).trim();'],
  ['a call cut by a comma', "credentials: single(plugins, 'credentials'),"],
  ['a type annotation', 'let privateKey: KeyObject;\nexport function sha256Hex(token: Principal): string {'],
  ['a property path', 'password: options.password,\nconst credentials = grpc.credentials.createInsecure();'],
  ['an index', 'const token = process.argv[3] ?? process.env.DISPATCH_TOKEN;'],
  ['a variable named like a secret', 'self.password = dbPassword\nclient_secret = clientSecret;'],
  ['a file name', 'secretKey: tokens.yaml'],
])('keeps code: %s', (_what, text) => {
  expect(redactSecrets(text)).toBe(text);
});

test.each<[string, string, string]>([
  ['an environment API key', 'API_KEY=sk-proj-AbCdEfGhIjKlMnOpQrStUvWx1234', 'API_KEY=[REDACTED:api_key]'],
  ['a YAML password', 'password: hunter2hunter2', 'password: [REDACTED:secret]'],
  ['a password of words', 'POSTGRES_PASSWORD=correcthorsebattery', 'POSTGRES_PASSWORD=[REDACTED:secret]'],
  ['a connection string', 'Server=db;User Id=sa;Password=hunter2hunter2;', 'Server=db;User Id=sa;Password=[REDACTED:secret];'],
  ['an ODBC PWD', 'DSN=prod;UID=app;PWD=Tr0ub4dor-3;', 'DSN=prod;UID=app;PWD=[REDACTED:secret];'],
  ['a quoted literal in code', 'const password = "hunter2hunter2";', 'const password = "[REDACTED:secret]";'],
  ['a spaced assignment of a value', 'token = abcd1234efgh5678', 'token = [REDACTED:secret]'],
  ['a session id', '{"session_id":"9fT2kQ7xLm4ZpR8vW1nB6cY3hJ0sD5gA7eK2uP9q"}', '{"session_id":"[REDACTED:high_entropy]"}'],
  ['a token of letters and digits', '{"token":"abcd1234efgh5678ijkl"}', '{"token":"[REDACTED:secret]"}'],
])('still redacts %s', (_what, input, expected) => {
  expect(redactSecrets(input)).toBe(expected);
});

test.each([
  ['base62', 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'],
  ['base64url', 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'],
])('random %s tokens are not taken for identifiers: at most 1 in 1,000 kept (fixed seed)', (_name, alphabet) => {
  let seed = 20240601;
  const next = () => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) >>> 8) / 2 ** 24;
  const token = () => Array.from({ length: 32 + Math.floor(next() * 33) }, () => alphabet[Math.floor(next() * alphabet.length)]).join('');
  const tokens = Array.from({ length: 2000 }, token).filter((t) => /[0-9]/.test(t) && /[a-z]/i.test(t));
  const kept = tokens.filter((t) => redactSecrets(`blob: ${t} done`) !== 'blob: [REDACTED:high_entropy] done');
  expect(kept.length).toBeLessThanOrEqual(2);
});

describe('skip_redaction, through the gRPC service', () => {
  const LEAKY = 'password: hunter2hunter2 token ghp_1234567890abcdefghijklmnopqrstuvwxyzAB';
  let d: ToolApp;
  beforeAll(async () => {
    const leaky: ToolRoute = (_req, res) => void res.writeHead(200).end(LEAKY);
    d = await startToolApp({ '/leaky': leaky }, (url) =>
      [
        `  - { name: ids, effect: read_only, skip_redaction: true, input_schema: '{"type":"object"}', http: { url: "${url}/leaky" } }`,
        `  - { name: ids_json, effect: read_only, skip_redaction: true, returns_json: true, input_schema: '{"type":"object"}', http: { url: "${url}/leaky" } }`,
        `  - { name: redacted, effect: read_only, input_schema: '{"type":"object"}', http: { url: "${url}/leaky" } }`,
      ].join('\n'),
    );
  });
  afterAll(() => d.close());

  test('a tool declared skip_redaction answers as it is; the same output from another tool is redacted', async () => {
    const res = await d.app.dispatch.dispatch({ sessionId: 's', calls: ['ids', 'ids_json', 'redacted'].map((name) => ({ id: name, name, arguments: '{}' })) });
    expect(res.results[0]).toMatchObject({ isError: false, output: LEAKY });
    expect(errorJson(res.results[1]!.output).message).toBe(`the tool is declared to return JSON but answered text that is not JSON: ${JSON.stringify(LEAKY)}`);
    expect(res.results[2]!.output).toBe('password: [REDACTED:secret] token [REDACTED:github_token]');
  });
});
