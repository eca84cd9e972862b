import * as grpc from '@grpc/grpc-js';
import { parseConfig } from '../../src/config';
import { startDispatch, type TestDispatch } from '../helpers/servers';

// Local keys (idempotency records, memo entries, loop windows, session budgets, scratch
// directories) join tenant, session and tool with NUL. A NUL in a session id or a tenant name
// would let "acme" + "prod\0s" name the session of tenant "acme\0prod" + "s".

const TOOLS = 'tools:\n  - name: echo\n    effect: read_only\n    builtin: { name: echo }\n';

let d: TestDispatch;
beforeAll(async () => (d = await startDispatch(TOOLS)));
afterAll(() => d.close());

const statusOf = (p: Promise<unknown>) => p.then(() => ({ code: grpc.status.OK, details: '' }), (e: grpc.ServiceError) => ({ code: e.code, details: e.details }));

test('a session id holding NUL or another control character is refused by Dispatch and EndSession, and nothing runs', async () => {
  const refused = { code: grpc.status.INVALID_ARGUMENT, details: 'session_id holds U+0000 at position 5: a session id may not hold control characters or invisible or bidirectional format characters' };
  expect(await statusOf(d.dispatch.dispatch({ sessionId: 'prod\u0000s', calls: [{ id: 'c', name: 'echo', arguments: '{"text":"x"}' }] }))).toEqual(refused);
  expect(await statusOf(d.dispatch.endSession({ sessionId: 'prod\u0000s' }))).toEqual(refused);
  // Other control characters too, since session ids follow the rule of client ids (src/parse/client-id.ts).
  const soh = { code: grpc.status.INVALID_ARGUMENT, details: 'session_id holds U+0001 at position 5: a session id may not hold control characters or invisible or bidirectional format characters' };
  expect(await statusOf(d.dispatch.dispatch({ sessionId: 'prod\u0001s', calls: [{ id: 'c', name: 'echo', arguments: '{"text":"x"}' }] }))).toEqual(soh);
  expect(await statusOf(d.dispatch.endSession({ sessionId: 'prod\u0001s' }))).toEqual(soh);
  // Ending an unknown session is OK, an empty or over-long id's too (DESIGN section 2).
  for (const sessionId of ['', 'x'.repeat(300)]) expect(await statusOf(d.dispatch.endSession({ sessionId }))).toEqual({ code: grpc.status.OK, details: '' });
});

test('a tenant name holding a control character is refused at load', () => {
  const sha256 = 'a'.repeat(64);
  const config = (tenant: string) => `auth:\n  tokens:\n    - { tenant: ${JSON.stringify(tenant)}, scopes: [dispatch], sha256: ${sha256} }\n${TOOLS}`;
  // The rule of client ids (src/parse/client-id.ts; test/security/tenant-names.test.ts has its format characters and length).
  expect(() => parseConfig(config('acme\u0000prod'), 'test.yaml')).toThrow('auth.tokens[0].tenant: holds U+0000 at position 5: a tenant name may not hold control characters');
  expect(() => parseConfig(config('acme\u007f'), 'test.yaml')).toThrow('holds U+007F at position 5: a tenant name may not hold control characters');
  expect(() => parseConfig(config('acme-prod'), 'test.yaml')).not.toThrow();
});
