import * as grpc from '@grpc/grpc-js';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { authYaml, bearer, startAuthApp, statusOf, type AuthApp, type TestToken } from './support/auth-app';

// Found by the edge-case hunt: `"format": "emial"` registered and checked nothing, and Ajv wrote
// `unknown format "emial" ignored in schema at path ...` with console.warn, raw text in dispatchd's
// JSON log, at each registration (any tenant with the admin scope could write such lines).

const A: TestToken = { token: 'tenant-a-admin-token', tenant: 'team-a', scopes: ['dispatch', 'admin'] };
let app: AuthApp;
beforeAll(async () => {
  app = await startAuthApp(authYaml([A]));
});
afterAll(() => app.close());

const register = (name: string, format: string) => {
  const inputSchema = JSON.stringify({ type: 'object', properties: { to: { type: 'string', format } } });
  return statusOf(app.registry.registerTools({ tools: [{ name, effect: Effect.READ_ONLY, inputSchema, executor: { case: 'builtin', value: { name: 'echo' } } }] }, bearer(A.token)));
};

test('RegisterTools refuses an unknown format, naming it and where it is, and nothing is written to the console', async () => {
  const consoleLines = (['log', 'warn', 'error'] as const).map((method) => jest.spyOn(console, method).mockImplementation(() => undefined));
  try {
    expect(await register('typo', 'emial')).toEqual({
      code: grpc.status.INVALID_ARGUMENT,
      details: 'tools[0] ("typo"): input_schema does not compile: unknown format "emial" at #/properties/to: did you mean "email"?',
    });
    expect(await register('made-up', 'phone-number')).toEqual({
      code: grpc.status.INVALID_ARGUMENT,
      details: expect.stringMatching(/^tools\[0\] \("made-up"\): input_schema does not compile: unknown format "phone-number" at #\/properties\/to: known formats: date, time, date-time, .*, email, /),
    });
    for (const spy of consoleLines) expect(spy).not.toHaveBeenCalled();
  } finally {
    for (const spy of consoleLines) spy.mockRestore();
  }
  const [result] = (await app.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c1', name: 'typo', arguments: '{"to":"x"}' }] }, bearer(A.token))).results;
  expect(JSON.parse(result!.output)).toMatchObject({ kind: 'UNKNOWN_TOOL' });
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
