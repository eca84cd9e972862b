// A usage error printed the whole ~50-line help after its one-line message, which scrolled it out
// of sight; now the message and `run 'dispatchctl --help' for usage`, exit 2 as before. `tools lst`
// said `unknown command "tools"`, as if `tools` were the word misspelt: it now names the
// subcommand, the one likely meant and those there are (approvals alike; an unknown command gets
// the one likely meant too). The compiled CLI (`npm run build` first); none of these connect.
import { runDispatchctl } from '../helpers/dispatchctl';

jest.setTimeout(30_000);

const HINT = "run 'dispatchctl --help' for usage";

test.each([
  [['tools', 'lst'], 'unknown tools subcommand "lst" (did you mean list? tools takes list, register or remove)'],
  [['tools', 'regster', 'x.yaml'], 'unknown tools subcommand "regster" (did you mean register? tools takes list, register or remove)'],
  [['tools', 'frob'], 'unknown tools subcommand "frob" (tools takes list, register or remove)'],
  [['tools'], 'tools needs a subcommand: list, register or remove'],
  [['approvals', 'resolv', 'x', '--approve'], 'unknown approvals subcommand "resolv" (did you mean resolve? approvals takes list or resolve)'],
  [['evnts'], 'unknown command "evnts" (did you mean events?)'],
  [['frobnicate'], 'unknown command "frobnicate"'],
  [['call'], 'call needs TOOL and JSON'],
])('%j: exit 2, the message and a line pointing to --help, not the whole help', async (argv, message) => {
  expect(await runDispatchctl(['--address', '127.0.0.1:1', ...argv])).toEqual({ code: 2, out: '', err: `dispatchctl: ${message}\n${HINT}\n` });
});

test('an unknown flag: its message and the hint', async () => {
  const run = await runDispatchctl(['--bogus', 'tools', 'list']);
  expect(run.code).toBe(2);
  expect(run.err).toMatch(/^dispatchctl: Unknown option '--bogus'[^\n]*\nrun 'dispatchctl --help' for usage\n$/);
});

test('no command at all still prints the usage (on stdout, exit 2), as --help does with exit 0', async () => {
  const [none, help] = await Promise.all([runDispatchctl([]), runDispatchctl(['--help'])]);
  expect(help).toMatchObject({ code: 0, err: '' });
  expect(help.out).toMatch(/^usage: dispatchctl /);
  expect(none).toEqual({ code: 2, out: help.out, err: '' });
});
