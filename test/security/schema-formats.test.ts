import * as grpc from '@grpc/grpc-js';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import type { Logger } from '../../src/log';
import { authYaml, bearer, startAuthApp, statusOf, type AuthApp, type TestToken } from './support/auth-app';

// Found by the edge-case hunt: Ajv wrote `unknown format "emial" ignored in schema at path ...` with
// console.warn, raw text in dispatchd's JSON log, at each registration (any tenant with the admin
// scope could write such lines). A format nothing checks stays an annotation, as JSON Schema has it
// (refusing it refused pydantic's and zod's generated schemas, and whole workers: found in review):
// now logged as one JSON warning per tool, with the known format a near miss may mean.

const A: TestToken = { token: 'tenant-a-admin-token', tenant: 'team-a', scopes: ['dispatch', 'admin'] };
const warnings: Record<string, unknown>[] = [];
const logger: Logger = { debug() {}, info() {}, error() {}, warn: (message, fields) => void warnings.push({ message, ...fields }) };
let app: AuthApp;
beforeAll(async () => {
  app = await startAuthApp(authYaml([A]), { logger });
});
afterAll(() => app.close());

const register = (name: string, format: string) => {
  const inputSchema = JSON.stringify({ type: 'object', properties: { to: { type: 'string', format } } });
  return statusOf(app.registry.registerTools({ tools: [{ name, effect: Effect.READ_ONLY, inputSchema, executor: { case: 'builtin', value: { name: 'echo' } } }] }, bearer(A.token)));
};

test('RegisterTools takes an unknown format as an annotation: registered, checking nothing, one JSON warning with the hint, nothing on the console', async () => {
  const consoleLines = (['log', 'warn', 'error'] as const).map((method) => jest.spyOn(console, method).mockImplementation(() => undefined));
  try {
    expect(await register('typo', 'emial')).toEqual({ code: 'ok', details: '' });
    expect(await register('read_file', 'path')).toEqual({ code: 'ok', details: '' });
    for (const spy of consoleLines) expect(spy).not.toHaveBeenCalled();
  } finally {
    for (const spy of consoleLines) spy.mockRestore();
  }
  expect(warnings.filter((w) => w.message === 'a tool schema names formats nothing checks: they are annotations')).toEqual([
    { message: 'a tool schema names formats nothing checks: they are annotations', tenant: 'team-a', tool: 'typo', formats: ['"emial" at #/properties/to (did you mean "email"?)'] },
    { message: 'a tool schema names formats nothing checks: they are annotations', tenant: 'team-a', tool: 'read_file', formats: ['"path" at #/properties/to'] },
  ]);
  const [result] = (await app.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c1', name: 'typo', arguments: '{"to":"x"}' }] }, bearer(A.token))).results;
  expect(result).toMatchObject({ isError: false, output: '{"to":"x"}' });
});

test('a known format registers and is enforced', async () => {
  expect(await register('mail', 'email')).toEqual({ code: 'ok', details: '' });
  const calls = [
    { id: 'c1', name: 'mail', arguments: '{"to":"not an address"}' },
    { id: 'c2', name: 'mail', arguments: '{"to":"a@example.com"}' },
  ];
  const results = (await app.dispatch.dispatch({ sessionId: 't', calls }, bearer(A.token))).results;
  expect(JSON.parse(results[0]!.output)).toMatchObject({ kind: 'INVALID_ARGUMENTS' });
  expect(results[1]).toMatchObject({ isError: false, output: '{"to":"a@example.com"}' });
});
