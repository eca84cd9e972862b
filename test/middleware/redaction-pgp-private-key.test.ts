import { randomBytes } from 'node:crypto';
import { redactSecrets } from '../../src/middleware';
import type { ToolRoute } from '../helpers/servers';
import { startToolApp, type ToolApp } from './redaction-service';

// Found in review: an OpenPGP private key (`gpg --export-secret-keys --armor`) passed as it was
// written but for its 64-character lines, which the entropy step caught one by one: its label is
// PGP PRIVATE KEY BLOCK, and only labels ending PRIVATE KEY were taken for private keys. The last,
// shorter line of its base64 and its checksum reached the model.

/** An ASCII-armored secret key: headers, a blank line, base64 in lines of 64, a last short line, the CRC. */
function armored(): { key: string; tail: string } {
  const body = randomBytes(48 * 10 + 15).toString('base64');
  const lines = body.match(/.{1,64}/g)!;
  const key = ['-----BEGIN PGP PRIVATE KEY BLOCK-----', 'Comment: ops@example.com', '', ...lines, '=Xk9p', '-----END PGP PRIVATE KEY BLOCK-----'].join('\n');
  return { key, tail: lines[lines.length - 1]! };
}

test('an armored OpenPGP private key is redacted whole', () => {
  const { key, tail } = armored();
  expect(tail.length).toBeLessThan(32);
  expect(redactSecrets(`exported:\n${key}\ndone`)).toBe('exported:\n[REDACTED:private_key]\ndone');
});

test('in a JSON string too', () => {
  const { key } = armored();
  expect(redactSecrets(JSON.stringify({ key, user: 'ops' }))).toBe(JSON.stringify({ key: '[REDACTED:private_key]', user: 'ops' }));
});

test('a public key block is kept', () => {
  const block = `-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQINBGK${'A'.repeat(20)}\n=Xk9p\n-----END PGP PUBLIC KEY BLOCK-----`;
  expect(redactSecrets(block)).toBe(block);
});

describe('through the gRPC service', () => {
  let d: ToolApp;
  const { key, tail } = armored();
  beforeAll(async () => {
    const secretKey: ToolRoute = (_req, res) => void res.writeHead(200).end(key);
    d = await startToolApp({ '/key': secretKey }, (url) => `  - { name: export_key, effect: read_only, input_schema: '{"type":"object"}', http: { url: "${url}/key" } }`);
  });
  afterAll(() => d.close());

  test('no line of the key reaches the model', async () => {
    const res = await d.app.dispatch.dispatch({ sessionId: 's', calls: [{ id: 't', name: 'export_key', arguments: '{}' }] });
    expect(res.results[0]!.output).not.toContain(tail);
    expect(res.results[0]!.output).toBe('[REDACTED:private_key]');
  });
});
