// `call NAME 'not json'` was sent on without a word and came back INVALID_ARGUMENTS (exit 3). It is
// still sent, as it was: the server's answer is what a model sending such arguments gets, and
// `call` reproduces it. A line on stderr now says first that the command line's arguments are no
// JSON. The compiled CLI (`npm run build` first) against the real server on port 0.
import { runDispatchctl } from '../helpers/dispatchctl';
import { startApp, type TestDispatch } from '../helpers/servers';

jest.setTimeout(30_000);

let d: TestDispatch;
beforeAll(async () => {
  d = await startApp('tools:\n  - name: echo\n    effect: read_only\n    builtin: { name: echo }\n');
});
afterAll(() => d.close());

const WARNING = 'dispatchctl: warning: the arguments are not JSON; sending them as they are\n';

test.each(['not json', "{'a': 1}", '{"a": 1,}'])('call echo %j: the warning on stderr, the server\'s INVALID_ARGUMENTS on stdout, exit 3', async (args) => {
  const run = await runDispatchctl(['--address', d.address, 'call', 'echo', args]);
  expect({ code: run.code, err: run.err }).toEqual({ code: 3, err: WARNING });
  expect(run.out).toMatch(/^✗ call_1 echo: INVALID_ARGUMENTS /);
  expect(run.out).toContain('arguments are not valid JSON');
});

test.each(['{"a": 1}', '', '  ', '[1]'])('call echo %j: JSON (or blank, which the server reads as {}): no warning', async (args) => {
  const run = await runDispatchctl(['--address', d.address, 'call', 'echo', args]);
  expect(run.err).toBe('');
});
