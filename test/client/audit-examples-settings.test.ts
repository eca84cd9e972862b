// Audit of examples/typescript's DISPATCH_ADDRESS and DISPATCH_TOKEN: an empty DISPATCH_ADDRESS was
// taken as the address ('Could not parse target name ""'), where dispatchctl and the Python
// examples count it unset, and a token with a trailing newline (a secret file) failed every call
// ('Metadata string value "Bearer ..." contains illegal characters') where they trim it.
import { createHash } from 'node:crypto';
import { runConversation, settingsFrom, type ModelCall } from '../../examples/typescript/backend';
import { startApp } from '../helpers/servers';

const TOKEN = 'audit-token-0123456789';
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

test('an empty DISPATCH_ADDRESS counts as unset; an unset token is none', () => {
  expect(settingsFrom({ DISPATCH_ADDRESS: '', DISPATCH_TOKEN: '' })).toEqual({ address: '127.0.0.1:50051', token: undefined });
  expect(settingsFrom({ DISPATCH_ADDRESS: '127.0.0.1:7', DISPATCH_TOKEN: ' \n' })).toEqual({ address: '127.0.0.1:7', token: undefined });
});

test('a DISPATCH_TOKEN read from a file with its newline reaches a server that requires it', async () => {
  const t = await startApp(`tools:
  - name: echo
    effect: read_only
    input_schema: '{"type":"object"}'
    builtin: { name: echo }
auth:
  tokens:
    - { tenant: acme, scopes: [dispatch], sha256: ${sha256(TOKEN)} }
`);
  try {
    const { address, token } = settingsFrom({ DISPATCH_ADDRESS: t.address, DISPATCH_TOKEN: `${TOKEN}\n` });
    const call: ModelCall = { id: 'c', name: 'echo', arguments: '{"n":1}' };
    expect(await runConversation(address, [[call]], token)).toEqual(['c ok tool=echo attempts=1: {"n":1}']);
  } finally {
    await t.close();
  }
});
