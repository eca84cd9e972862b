import { create } from '@bufbuild/protobuf';
import { Effect, ToolSpecSchema } from '../../gen/dispatch/v1/tool_pb';
import { redactSecrets, redaction, resultVerification } from '../../src/middleware';
import { applyMiddleware, type Invocation } from '../../src/pipeline';
import { resolveTool } from '../../src/registry';
import type { ToolRoute } from '../helpers/servers';
import { errorJson } from '../guards/helpers';
import { startToolApp, type ToolApp } from './redaction-service';

// Found in review: secrets that reached the model past the key-value patterns.
test.each<[string, string, string]>([
  // (b) JSON inside a JSON string: its quotes are escaped, which ended the key before.
  [
    'JSON inside a JSON string',
    JSON.stringify({ config: JSON.stringify({ password: 'hunter2hunter2', api_key: 'abcd1234efgh5678', n: 1 }) }),
    JSON.stringify({ config: JSON.stringify({ password: '[REDACTED:secret]', api_key: '[REDACTED:api_key]', n: 1 }) }),
  ],
  ['escaped quotes in text', 'password: \\"hunter2-prod-db-Pa55\\" for db', 'password: \\"[REDACTED:secret]\\" for db'],
  // (c) camelCase names: the key word after a lowercase letter, or a capitalised one after capitals.
  ['camelCase keys in text', 'dbPassword=hunter2hunter2 githubToken: abcd1234efgh5678', 'dbPassword=[REDACTED:secret] githubToken: [REDACTED:secret]'],
  [
    'camelCase keys in JSON',
    '{"dbPassword":"hunter2hunter2","githubToken":"abcd1234efgh5678","DBPassword":"xyzxyzxyz1","stripeApiKey":"abcdefgh12345"}',
    '{"dbPassword":"[REDACTED:secret]","githubToken":"[REDACTED:secret]","DBPassword":"[REDACTED:secret]","stripeApiKey":"[REDACTED:api_key]"}',
  ],
  // A name after an escaped line break in a JSON string (`\npassword`) has a letter before it.
  [
    'a key or token after an escaped line break',
    '{"log":"start\\npassword=hunter2hunter2\\r\\nAuthorization: Basic dXNlcjpwYXNzd29yZA==\\nAKIAIOSFODNN7EXAMPLE"}',
    '{"log":"start\\npassword=[REDACTED:secret]\\r\\nAuthorization: Basic [REDACTED:authorization]\\n[REDACTED:aws_access_key]"}',
  ],
])('%s', (_what, input, expected) => {
  expect(redactSecrets(input)).toBe(expected);
});

// Found in review: key names the list missed. A passphrase (often words, under the entropy
// threshold), and an Authorization header holding a raw token with no scheme; in JSON, even one
// with a scheme (`Basic ...`) passed, as the JSON pass read its value without the key before it.
test.each<[string, string, string]>([
  ['a passphrase of words in JSON', '{"passphrase":"correcthorsebattery"}', '{"passphrase":"[REDACTED:secret]"}'],
  ['a prefixed passphrase in text', 'ssh_passphrase: Tr0ub4dor-3x\nGPG_PASSPHRASE=hunter2hunter2', 'ssh_passphrase: [REDACTED:secret]\nGPG_PASSPHRASE=[REDACTED:secret]'],
  ['a raw token under Authorization in text', 'Authorization: lin_api_abcd1234efgh5678\r\nProxy-Authorization: abcd1234efgh', 'Authorization: [REDACTED:authorization]\r\nProxy-Authorization: [REDACTED:authorization]'],
  ['a raw token under Authorization in JSON', '{"headers":{"Authorization":"abcd1234efgh5678"}}', '{"headers":{"Authorization":"[REDACTED:authorization]"}}'],
  [
    'a scheme and its credentials under Authorization in JSON',
    '[{"authorization":"Basic dXNlcjpwYXNzd29yZA=="},{"Authorization":"Token abc123def456"},{"Authorization":"Bearer abc123def"}]',
    '[{"authorization":"Basic [REDACTED:authorization]"},{"Authorization":"Token [REDACTED:authorization]"},{"Authorization":"Bearer [REDACTED:bearer]"}]',
  ],
])('%s', (_what, input, expected) => {
  expect(redactSecrets(input)).toBe(expected);
});

test.each([
  ['a lowercase prefix is another word', 'dbpassword=hunter2hunter2 mytoken=abcdefgh1234'],
  ['pagination tokens in camelCase and capitals', '{"NextToken":"abcdefghijk123","nextPageToken":"abcdefghijk123","NEXT_TOKEN":"abcdefghijk123"}'],
])('keeps %s', (_what, text) => {
  expect(redactSecrets(text)).toBe(text);
});

const jsonTool = (): Invocation => ({
  tool: resolveTool(create(ToolSpecSchema, { name: 't', effect: Effect.READ_ONLY, returnsJson: true }), '', { schema: {}, validate: (() => true) as never }),
  args: {},
  ctx: { tenant: 'x', sessionId: 's', toolCallId: 'c', attempt: 1, idempotencyKey: 'k', localKey: 'k', signal: new AbortController().signal, onAbort: () => () => undefined, deadline: Infinity, scratchDir: async () => '/tmp' },
});

// (a) The UNEXPECTED message quotes the output with JSON.stringify: `"` became `\"`, which ended
// the value class, so the outer redaction let the password through.
test('the excerpt of a returns_json tool that answered text is redacted before it is quoted', async () => {
  const tool = async () => ({ text: 'config dump follows: password: "hunter2-prod-db-Pa55" for db' });
  const handler = applyMiddleware(tool, [redaction(), resultVerification()]);
  await expect(handler(jsonTool())).rejects.toThrow('answered text that is not JSON: "config dump follows: password: \\"[REDACTED:secret]\\" for db"');
});

test('a secret across the excerpt cut is redacted whole, not cut short first', async () => {
  // Cut first, the excerpt ended `password=hunt...`: too short a value to redact.
  const text = `${'x'.repeat(66)} password=hunter2hunter2hunter2 and more`;
  const handler = applyMiddleware(async () => ({ text }), [redaction(), resultVerification()]);
  await expect(handler(jsonTool())).rejects.toThrow(`"${'x'.repeat(66)} password=[RED..."`);
});

describe('through the gRPC service', () => {
  let d: ToolApp;
  beforeAll(async () => {
    const text: ToolRoute = (_req, res) => void res.writeHead(200).end('config dump follows: password: "hunter2-prod-db-Pa55" for db');
    d = await startToolApp({ '/text': text }, (url) => `  - { name: get_text, effect: read_only, returns_json: true, input_schema: '{"type":"object"}', http: { url: "${url}/text" } }`);
  });
  afterAll(() => d.close());

  test('the UNEXPECTED message the model reads holds no password', async () => {
    const res = await d.app.dispatch.dispatch({ sessionId: 's', calls: [{ id: 't', name: 'get_text', arguments: '{}' }] });
    expect(errorJson(res.results[0]!.output)).toMatchObject({
      kind: 'UNEXPECTED',
      message: 'the tool is declared to return JSON but answered text that is not JSON: "config dump follows: password: \\"[REDACTED:secret]\\" for db"',
    });
    expect(res.results[0]!.output).not.toContain('hunter2');
  });
});
