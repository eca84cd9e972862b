import { redactSecrets } from '../../src/middleware';
import type { ToolRoute } from '../helpers/servers';
import { startToolApp, type ToolApp } from './redaction-service';

// Found in review: an Azure Storage connection string's AccountKey (64 random bytes in base64) was
// caught only by the entropy step, which takes a run of more than two slashes for a path: about
// one key in six (311 of 2,000 random keys measured) has three or more, and reached the model
// whole. Nor was the name AccountKey (or Service Bus's SharedAccessKey) known as a secret's.
const ACCOUNT_KEY = 'jw5uM/pNgoSayZ3oURPQaRbuSBjyvxLR/YHIq6jmQp45C78+ul+qapzpDA0MRKX7W9OyJmowAuy8r8+jh9Iq/w==';
const SHARED_ACCESS_KEY = 'sQasPl/z/J2WJ/rNjS4XZVb04ENvfwmIfCcVdB3wOm8=';
const CONNECTION = `DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=${ACCOUNT_KEY};EndpointSuffix=core.windows.net`;

test.each<[string, string, string]>([
  ['a storage connection string', CONNECTION, 'DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=[REDACTED:secret];EndpointSuffix=core.windows.net'],
  ['one in an environment variable', `AZURE_STORAGE_CONNECTION_STRING="${CONNECTION}"`, 'AZURE_STORAGE_CONNECTION_STRING="DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=[REDACTED:secret];EndpointSuffix=core.windows.net"'],
  ['an account key in JSON', JSON.stringify({ accountName: 'acct', accountKey: ACCOUNT_KEY }), JSON.stringify({ accountName: 'acct', accountKey: '[REDACTED:secret]' })],
  [
    'a Service Bus connection string',
    `Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=${SHARED_ACCESS_KEY}`,
    'Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=[REDACTED:secret]',
  ],
])('redacts %s', (_what, input, expected) => {
  expect(redactSecrets(input)).toBe(expected);
});

test.each([
  ['an account key read from a variable', 'const accountKey = process.env.AZURE_STORAGE_KEY;'],
  ['an account key placeholder', 'AccountKey=${AZURE_STORAGE_KEY}'],
])('keeps %s', (_what, text) => {
  expect(redactSecrets(text)).toBe(text);
});

describe('through the gRPC service', () => {
  let d: ToolApp;
  beforeAll(async () => {
    const settings: ToolRoute = (_req, res) => void res.writeHead(200).end(`storage: ${CONNECTION}`);
    d = await startToolApp({ '/settings': settings }, (url) => `  - { name: app_settings, effect: read_only, input_schema: '{"type":"object"}', http: { url: "${url}/settings" } }`);
  });
  afterAll(() => d.close());

  test('the account key does not reach the model', async () => {
    const res = await d.app.dispatch.dispatch({ sessionId: 's', calls: [{ id: 't', name: 'app_settings', arguments: '{}' }] });
    expect(res.results[0]!.output).not.toContain(ACCOUNT_KEY.slice(0, 20));
  });
});
