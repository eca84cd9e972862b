// dispatchctl's exit codes and messages as a script meets them: 3 for a turn whose results hold an
// error, 1 and a line on stderr when `events` sees the server end its stream, a start deadline for
// `events` at an endpoint that never answers, usage errors (2) for an address dispatchctl cannot
// reach, and errors naming the variable a setting came from. Real servers on port 0.
import { createServer, type Server, type Socket } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/cli/dispatchctl';
import { resolveConnection } from '../../src/cli/dispatchctl-connection';
import { dispatchctlAt } from '../helpers/dispatchctl';
import { startApp, startDispatch, type TestDispatch } from '../helpers/servers';
import { until } from '../helpers/until';

jest.setTimeout(30_000);

const TOOLS = 'tools:\n  - name: echo\n    effect: read_only\n    input_schema: \'{"type":"object","properties":{"n":{"type":"integer"}}}\'\n    builtin: { name: echo }\n';

let d: TestDispatch;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ctl-exit-'));
  d = await startDispatch(TOOLS);
});
afterAll(async () => {
  await d.close();
  rmSync(dir, { recursive: true, force: true });
});

const ctl = dispatchctlAt(() => d.address);

async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, (l) => out.push(l), (l) => err.push(l));
  return { code, out: out.join('\n'), err: err.join('\n') };
}

test('call and dispatch exit 3 when a result is an error, 0 when none is; the results are printed either way', async () => {
  expect(await ctl('call', 'echo', '{"n":1}')).toMatchObject({ code: 0, err: '' });
  const invalid = await ctl('call', 'echo', '{"n":"many"}');
  expect(invalid).toMatchObject({ code: 3, err: '' });
  expect(invalid.out).toMatch(/^✗ call_1 echo: INVALID_ARGUMENTS/);
  expect((await ctl('call', 'ecko', '{}')).code).toBe(3);
  const turn = join(dir, 'turn.json');
  writeFileSync(turn, JSON.stringify({ calls: [{ id: 'a', name: 'echo', arguments: {} }, { id: 'b', name: 'nope', arguments: {} }] }));
  const mixed = await ctl('dispatch', turn);
  expect(mixed.code).toBe(3);
  expect(mixed.out.split('\n').filter((l) => /^[✓✗]/.test(l)).map((l) => l.slice(0, 3))).toEqual(['✓ a', '✗ b']);
});

test('events without --follow: the server ending the stream (a drain) exits 1 and says so', async () => {
  const own = await startApp(TOOLS);
  const lines: string[] = [];
  const errors: string[] = [];
  const done = main(['--address', own.address, '--session', 'drain', 'events'], (l) => lines.push(l), (l) => errors.push(l));
  try {
    await until(async () => {
      await own.dispatch.dispatch({ sessionId: 'drain', calls: [{ id: 'probe', name: 'echo', arguments: '{}' }] });
      return lines.length > 0 || undefined;
    }, 'the subscription live');
  } finally {
    await own.close();
  }
  expect(await done).toBe(1);
  expect(errors).toEqual(['dispatchctl: the server ended the stream (it is draining or shutting down; --follow subscribes again)']);
});

test('events at an endpoint that takes the connection and never answers gives up after --timeout', async () => {
  const sockets: Socket[] = [];
  const silent: Server = createServer((socket) => void sockets.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const port = (silent.address() as { port: number }).port;
  let timer: NodeJS.Timeout | undefined;
  try {
    const started = Date.now();
    const outcome = await Promise.race([
      run('--address', `127.0.0.1:${port}`, '--timeout', '1', 'events'),
      new Promise<string>((resolve) => (timer = setTimeout(() => resolve('still running after 10 s'), 10_000))),
    ]);
    expect(outcome).toEqual({ code: 1, out: '', err: 'dispatchctl: DEADLINE_EXCEEDED: no answer within 1 s (--timeout)' });
    expect(Date.now() - started).toBeLessThan(5_000);
  } finally {
    clearTimeout(timer);
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  }
});

test('an address without a port, or with one past 65535, is a usage error naming where it came from', async () => {
  for (const address of ['127.0.0.1:99999', '127.0.0.1', '127.0.0.1:0', 'localhost:', '::1', 'dns:///localhost']) {
    const refused = await run('--address', address, 'tools', 'list');
    expect(refused).toEqual({ code: 2, out: '', err: `dispatchctl: --address must be HOST:PORT with a port from 1 to 65535 ([::1]:PORT for IPv6), or unix:PATH; got ${JSON.stringify(address)}` });
  }
  expect(() => resolveConnection({}, { DISPATCH_ADDRESS: 'example.com' })).toThrow('DISPATCH_ADDRESS must be HOST:PORT');
  for (const address of ['127.0.0.1:50051', '[::1]:50051', 'localhost:1', 'dns:///localhost:443', 'ipv4:127.0.0.1:1,127.0.0.2:2', 'unix:/tmp/dispatch.sock']) {
    expect(resolveConnection({ address }, {}).address).toBe(address);
  }
});

test('a TLS file set by a variable is named by the variable', () => {
  const missing = join(dir, 'nope.pem');
  expect(() => resolveConnection({}, { DISPATCH_TLS_CA: missing })).toThrow(`cannot read DISPATCH_TLS_CA ${missing} (ENOENT)`);
  expect(() => resolveConnection({ 'tls-ca': missing }, {})).toThrow(`cannot read --tls-ca ${missing} (ENOENT)`);
  const garbage = join(dir, 'garbage.pem');
  writeFileSync(garbage, 'not a certificate');
  expect(() => resolveConnection({}, { DISPATCH_TLS_CA: garbage })).toThrow(`no PEM certificate in ${garbage} (from DISPATCH_TLS_CA)`);
  expect(() => resolveConnection({}, { DISPATCH_TLS_CERT: garbage })).toThrow('--tls-cert and --tls-key must be given together: DISPATCH_TLS_CERT is set, --tls-key (DISPATCH_TLS_KEY) is not');
});
