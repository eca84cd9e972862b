// dispatchctl can take an approval end to end, against a real dispatchd (bin/dispatchd.js): a turn
// file with "interactive": true waits on an ask policy's approval, `approvals` lists it, and
// `approvals resolve ID --approve` runs the call (the tool server sees it once) or `--deny`
// refuses it (BLOCKED, the tool never called). Before, a turn file with "interactive" (or
// "offered_tools") was refused `unknown key`, and there was no resolve: README and docs/policies.md
// pointed at dispatchctl for approvals it could not give. dist/ must be built (npm run build).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDaemon, type Daemon } from '../helpers/daemon';
import { dispatchctlAt } from '../helpers/dispatchctl';
import { startToolServer, type ToolServer } from '../helpers/servers';
import { until } from '../helpers/until';

jest.setTimeout(60_000);

let tools: ToolServer;
let daemon: Daemon;
let dir: string;
let deployed = 0;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ctl-approvals-'));
  tools = await startToolServer({
    '/deploy': async (_req, res) => {
      deployed++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"deployed":true}');
    },
  });
  const config = join(dir, 'dispatch.yaml');
  writeFileSync(
    config,
    `tools:
  - name: deploy
    effect: side_effect
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/deploy" }
  - { name: echo, effect: read_only, builtin: { name: echo } }
policies:
  - match: deploy
    decide: ask
    reason: changes production
limits: { approval_timeout_ms: 30000 }
`,
  );
  daemon = await startDaemon(['--config', config]);
});
afterAll(async () => {
  daemon?.child.kill('SIGKILL');
  await daemon?.exited.catch(() => undefined);
  await tools?.close();
  rmSync(dir, { recursive: true, force: true });
});

const ctl = dispatchctlAt(() => `127.0.0.1:${daemon.port}`);

/** Writes a turn file of one deploy call in `session`, waiting for approval. */
function interactiveTurn(session: string): string {
  const file = join(dir, `${session}.json`);
  writeFileSync(file, JSON.stringify({ session_id: session, interactive: true, calls: [{ id: 'c1', name: 'deploy', arguments: { env: 'production' } }] }));
  return file;
}

/** The id of the approval waiting in `session`, once `dispatchctl approvals` lists it. */
async function waitingId(session: string): Promise<string> {
  const listed = await until(async () => {
    const run = await ctl('approvals', '--session', session);
    return run.code === 0 && run.out.includes('call c1') ? run.out : undefined;
  }, `the approval of ${session} listed`);
  expect(listed).toMatch(new RegExp(`^\\S+  session ${session}  call c1  deploy  expires in \\d+s\\n  reason: changes production\\n  arguments: \\{"env":"production"\\}$`));
  return listed.split(' ')[0]!;
}

test('approve: the waiting call is listed, approved by its id, and runs once', async () => {
  const before = deployed;
  const turn = ctl('dispatch', interactiveTurn('approve-me'));
  const id = await waitingId('approve-me');
  expect(deployed).toBe(before);
  expect(await ctl('approvals', 'resolve', id, '--approve', '--reason', 'checked')).toEqual({ code: 0, out: `approved ${id}`, err: '' });
  const done = await turn;
  expect(done.code).toBe(0);
  expect(done.out).toMatch(/^✓ c1 deploy \(1 attempt, \d+ ms\)\n {2}│ \{"deployed":true\}$/);
  expect(deployed).toBe(before + 1);
  // Decided already: nothing is waiting under that id.
  const again = await ctl('approvals', 'resolve', id, '--deny');
  expect(again.code).toBe(1);
  expect(again.out).toBe(`approval ${id} is not waiting: unknown, already decided, timed out, ended, or another tenant's`);
  expect((await ctl('approvals', '--session', 'approve-me')).out).toBe('(no approvals waiting)');
});

test('deny: the call is refused BLOCKED without running, exit 3', async () => {
  const before = deployed;
  const turn = ctl('dispatch', interactiveTurn('deny-me'));
  const id = await waitingId('deny-me');
  expect(await ctl('approvals', 'resolve', id, '--deny', '--reason', 'not today')).toEqual({ code: 0, out: `denied ${id}`, err: '' });
  const done = await turn;
  expect(done.code).toBe(3);
  expect(done.out).toMatch(/^✗ c1 deploy: BLOCKED /);
  expect(deployed).toBe(before);
});

test('offered_tools reaches Dispatch: a call naming a tool not offered is not dispatched', async () => {
  const file = join(dir, 'offered.json');
  writeFileSync(file, JSON.stringify({ session_id: 'offered', offered_tools: ['echo'], calls: [{ id: 'c1', name: 'deploy', arguments: {} }, { id: 'c2', name: 'echo', arguments: { a: 1 } }] }));
  const before = deployed;
  const run = await ctl('dispatch', file);
  expect(run.code).toBe(3);
  expect(run.out).toMatch(/^✗ c1 deploy: UNKNOWN_TOOL /);
  expect(run.out).toMatch(/\n✓ c2 echo /);
  expect(deployed).toBe(before);
});

test.each([
  [['approvals', 'resolve'], 'dispatchctl: approvals resolve needs ID (as approvals lists it) and --approve or --deny'],
  [['approvals', 'resolve', 'x'], 'dispatchctl: approvals resolve needs one of --approve or --deny'],
  [['approvals', 'resolve', 'x', '--approve', '--deny'], 'dispatchctl: approvals resolve needs only one of --approve or --deny'],
  [['approvals', 'resolve', 'x', 'y', '--approve'], 'dispatchctl: approvals resolve takes one ID, got also "y"'],
  [['approvals', 'resolv', 'x'], 'dispatchctl: unknown approvals subcommand "resolv" (did you mean resolve? approvals takes list or resolve)'],
  [['approvals', 'list', 'x'], 'dispatchctl: approvals list takes no arguments, got "x" (filter with --session or --tool)'],
])('usage error, exit 2: %j', async (args, message) => {
  const run = await ctl(...args);
  expect(run.code).toBe(2);
  expect(run.err.split('\n')[0]).toBe(message);
});

test.each([
  [{ interactive: 'yes' }, '"interactive" must be true or false, got "yes"'],
  [{ offered_tools: 'echo' }, '"offered_tools" must be a list of tool names, got "echo"'],
  [{ interactiv: true }, 'interactiv: unknown key "interactiv" (did you mean interactive?)'],
])('a bad turn file is refused, exit 1, naming the key: %j', async (extra, problem) => {
  const file = join(dir, 'bad.json');
  writeFileSync(file, JSON.stringify({ session_id: 'bad', calls: [{ id: 'c1', name: 'echo', arguments: {} }], ...extra }));
  const run = await ctl('dispatch', file);
  expect(run.code).toBe(1);
  expect(run.err.split('\n')[0]).toBe(`dispatchctl: ${file}: ${problem}`);
});
