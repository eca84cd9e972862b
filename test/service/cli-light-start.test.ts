// dispatchd and dispatchctl answer --help and a usage error without loading the app: the suite
// spawns them over a hundred times, and each once loaded gRPC, OpenTelemetry, ioredis and the MCP
// SDK first (~0.5 s and ~120 MB) only to print a line. Runs the compiled dist/ (`npm test` builds it).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { failedStart } from '../helpers/startup-line';

const CLI = join(__dirname, '..', '..', 'dist', 'src', 'cli');
const HEAVY = ['@grpc/grpc-js', '@opentelemetry/api', '@opentelemetry/sdk-trace-base', '@opentelemetry/sdk-metrics', 'ioredis', '@modelcontextprotocol/sdk'];

const dir = mkdtempSync(join(tmpdir(), 'cli-light-start-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `cli`'s main with `args` in a fresh node; its exit code, output, and the heavy packages it loaded. */
function run(cli: 'dispatchd' | 'dispatchctl', args: string[]): { code: number; stdout: string; stderr: string; loaded: string[] } {
  const script = `require(${JSON.stringify(join(CLI, cli))}).main(${JSON.stringify(args)}).then((code) => {
    const heavy = ${JSON.stringify(HEAVY)}.filter((name) => Object.keys(require.cache).some((file) => file.includes('/node_modules/' + name)));
    process.stdout.write('\\nLOADED ' + JSON.stringify(heavy) + '\\n');
    process.exitCode = code;
  });`;
  const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 15_000, env: { ...process.env, DISPATCH_LISTEN: '', DISPATCH_CONFIG: '' } });
  const [stdout, loaded] = child.stdout.split('\nLOADED ');
  return { code: child.status!, stdout: stdout!, stderr: child.stderr, loaded: JSON.parse(loaded!) as string[] };
}

test('dispatchd: a usage error and --help load none of the app (exit 2 and 0 as before)', () => {
  const bad = run('dispatchd', ['--bogus']);
  expect({ stdout: bad.stdout, loaded: bad.loaded, failure: failedStart(bad, { only: true }) }).toEqual({ stdout: '', loaded: [], failure: { exit: 2, level: 'error', code: 'invalid_flag', message: "dispatchd: Unknown option '--bogus'" } });
  const grace = run('dispatchd', ['--grace', 'soon']);
  expect({ code: grace.code, loaded: grace.loaded }).toEqual({ code: 2, loaded: [] });
  expect(failedStart(grace)).toEqual({ exit: 2, level: 'error', code: 'invalid_setting', message: expect.stringMatching(/^dispatchd: --grace must be a non-negative integer/) });
  const help = run('dispatchd', ['--help']);
  expect({ code: help.code, stderr: help.stderr, loaded: help.loaded }).toEqual({ code: 0, stderr: '', loaded: [] });
  expect(help.stdout).toMatch(/^usage: dispatchd /);
});

test('dispatchd: a bad config file is refused before the app (gRPC server, OpenTelemetry, ioredis, MCP) loads', () => {
  const file = join(dir, 'bad.yaml');
  writeFileSync(file, 'tools: [\n');
  const bad = run('dispatchd', ['--listen', '127.0.0.1:0', '--config', file]);
  expect(failedStart(bad)).toEqual({ exit: 1, level: 'error', code: 'invalid_config', message: expect.stringContaining(`dispatchd: bad config: ${file}`) });
  // The config's checks reach the registry's (and through its errors gRPC's status codes), and
  // OpenTelemetry's warnings are routed to the log before it is read: those two packages, none of
  // the SDKs, ioredis or MCP.
  expect(bad.loaded.filter((name) => name !== '@grpc/grpc-js' && name !== '@opentelemetry/api')).toEqual([]);
});

test('dispatchctl: --help, no command and a bad flag load no gRPC', () => {
  const help = run('dispatchctl', ['--help']);
  expect({ code: help.code, stderr: help.stderr, loaded: help.loaded }).toEqual({ code: 0, stderr: '', loaded: [] });
  expect(help.stdout).toMatch(/^usage: dispatchctl /);
  const none = run('dispatchctl', []);
  expect({ code: none.code, stdout: none.stdout, loaded: none.loaded }).toEqual({ code: 2, stdout: help.stdout, loaded: [] });
  const empty = run('dispatchctl', ['']);
  expect({ code: empty.code, stdout: empty.stdout, loaded: empty.loaded }).toEqual({ code: 2, stdout: help.stdout, loaded: [] });
  const bad = run('dispatchctl', ['--bogus']);
  expect({ code: bad.code, loaded: bad.loaded }).toEqual({ code: 2, loaded: [] });
  expect(bad.stderr).toMatch(/^dispatchctl: Unknown option '--bogus'.*\nrun 'dispatchctl --help' for usage\n$/s);
});

test('dispatchctl: an unknown command and a command missing its argument load no gRPC (exit 2, pointing to --help)', () => {
  const cases: Array<[string[], string]> = [
    [['bogus'], 'unknown command "bogus"'],
    [['tools'], 'tools needs a subcommand: list, register or remove'],
    [['tools', 'bogus'], 'unknown tools subcommand "bogus" (tools takes list, register or remove)'],
    [['tools remove', 'x', 'NAME'], 'unknown command "tools remove"'],
    [['tools list'], 'unknown command "tools list"'],
    [['tools', 'register'], 'tools register needs FILE'],
    [['tools', 'remove'], 'tools remove needs NAME'],
    [['call'], 'call needs TOOL and JSON'],
    [['call', ''], 'call needs TOOL and JSON'],
    [['dispatch'], 'dispatch needs FILE'],
    [['read'], 'read needs HANDLE'],
    [['read', 'h', 'notanumber'], 'OFFSET must be a whole number from 0 to 4294967295, got "notanumber"'],
    [['end-session'], 'end-session needs SESSION'],
    [['parse'], 'parse needs FILE'],
    [['approvals', 'bogus'], 'unknown approvals subcommand "bogus" (approvals takes list or resolve)'],
    [['approvals', 'resolve'], 'approvals resolve needs ID (as approvals lists it) and --approve or --deny'],
  ];
  for (const [args, message] of cases) {
    const got = run('dispatchctl', args);
    expect({ args, code: got.code, stdout: got.stdout, loaded: got.loaded }).toEqual({ args, code: 2, stdout: '', loaded: [] });
    expect(got.stderr).toBe(`dispatchctl: ${message}\nrun 'dispatchctl --help' for usage\n`);
  }
});

test('dispatchctl: a command with what it needs goes on to load the commands (here it fails to connect: exit 1)', () => {
  const got = run('dispatchctl', ['--address', '127.0.0.1:1', '--timeout', '2', 'call', 'echo', '{}']);
  expect(got.code).toBe(1);
  expect(got.stderr).toMatch(/^dispatchctl: (UNAVAILABLE|DEADLINE_EXCEEDED): /);
  expect(got.loaded).toContain('@grpc/grpc-js');
});
