import { createHash } from 'node:crypto';
import { idempotencyKey, keyMaterial, localSessionKey } from '../../src/store';

// One helper names a session in this process's maps (memory store, memo cache, scratch directories,
// session budgets) and starts every idempotency key's material, unchanged from the keys' first format
// so that replicas of earlier versions share idempotency records.

test('a local session key is the tenant, NUL and the session id; an idempotency key material starts with it', () => {
  const scope = { tenant: 'acme', sessionId: 'chat-42' };
  expect(localSessionKey(scope)).toBe('acme\u0000chat-42');
  expect(localSessionKey({ tenant: '', sessionId: '' })).toBe('\u0000');
  expect(keyMaterial(scope, 'send', { to: 'a', body: 'b' }, ['/to'])).toBe(`${localSessionKey(scope)}\u0000send\u0000["a"]`);
  const expected = createHash('sha256').update('acme\u0000chat-42\u0000send\u0000{"body":"b","to":"a"}').digest('base64url');
  expect(idempotencyKey(scope, 'send', { to: 'a', body: 'b' }, [])).toBe(expected);
});
