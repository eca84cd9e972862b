import { startApp } from '../helpers/servers';
import { failure } from './error-info';

// A Python agent author's probe: a Dispatch refused for its session id (a line break, a
// right-to-left override) had that very id echoed in ErrorInfo's metadata, which backends log:
// a line break there forges a log line. A refused id is no longer echoed; an accepted one is.

let d: Awaited<ReturnType<typeof startApp>>;
beforeAll(async () => {
  d = await startApp('tools:\n  - { name: echo, effect: read_only, builtin: { name: echo } }');
});
afterAll(() => d.close());

test.each([
  ['a line break', 'a\nforged: line'],
  ['a right-to-left override', 'abc\u202Efdp.exe'],
  ['an escape sequence', 'x\u001b[2Jy'],
])('a session id with %s is refused by name, not echoed', async (_, sessionId) => {
  const info = await failure(d.dispatch.dispatch({ sessionId, calls: [{ id: 'c1', name: 'echo', arguments: '{}' }] }));
  expect(info).toMatchObject({ reason: 'INVALID_ARGUMENT', metadata: { field: 'session_id' } });
  expect(info.metadata).not.toHaveProperty('session_id');
});

test('an accepted session id is echoed, as before', async () => {
  const info = await failure(d.dispatch.dispatch({ sessionId: 'good-s', calls: [{ id: 'bad\u0007', name: 'echo', arguments: '{}' }] }));
  expect(info.metadata).toMatchObject({ field: 'calls[0].id', session_id: 'good-s' });
});
