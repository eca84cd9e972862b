import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { eventsCommand, kindOf } from '../../src/cli/events-command';
import { EventKind } from '../../gen/dispatch/v1/dispatch_pb';
import { buildApp } from '../../src/app';
import { parseConfig } from '../../src/config';
import { SILENT_LOGGER } from '../../src/log';
import { serveApp, startApp, type TestDispatch } from '../helpers/servers';

const YAML = `
tools:
  - name: echo
    effect: read_only
    input_schema: '{"type":"object"}'
    builtin: { name: echo }
  - name: shout
    effect: read_only
    input_schema: '{"type":"object"}'
    builtin: { name: echo }
`;

let d: TestDispatch;
beforeAll(async () => {
  d = await startApp(YAML);
});
afterAll(() => d.close());

async function until(predicate: () => boolean, what: string, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

test('dispatchctl events tails one readable line per event, filtered by session and tool, until interrupted', async () => {
  const lines: string[] = [];
  const errors: string[] = [];
  const controller = new AbortController();
  const done = eventsCommand(d.address, { session: 'cli', tool: 'echo' }, (l) => lines.push(l), controller.signal, (l) => errors.push(l));
  // The subscription is live once a probe dispatched in the session shows up.
  for (let i = 0; i < 100 && lines.length === 0; i++) {
    await d.dispatch.dispatch({ sessionId: 'cli', turn: 1, calls: [{ id: 'probe', name: 'echo', arguments: '{}' }] });
    await new Promise((r) => setTimeout(r, 20));
  }
  await until(() => lines.some((l) => l.includes('call=probe')), 'the probe');
  lines.length = 0;
  await d.dispatch.dispatch({ sessionId: 'other', calls: [{ id: 'x', name: 'echo', arguments: '{}' }] });
  await d.dispatch.dispatch({ sessionId: 'cli', turn: 7, calls: [{ id: 'c1', name: 'echo', arguments: '{"q":"v"}' }] });
  await until(() => lines.some((l) => l.includes('TOOL_POST') && l.includes('call=c1')), 'TOOL_POST of c1');
  const mine = lines.filter((l) => l.includes('call=c1'));
  expect(mine).toHaveLength(3);
  expect(mine[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} CALL_RECEIVED session=cli turn=7 call=c1 tool=echo args=\{"q":"string"\}$/);
  expect(mine[1]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} TOOL_PRE session=cli turn=7 call=c1 tool=echo attempt=1 effect=read_only$/);
  expect(mine[2]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} TOOL_POST session=cli turn=7 call=c1 tool=echo attempt=1 outcome=ok ms=\d+ chars=\d+$/);
  expect(lines.some((l) => l.includes('session=other'))).toBe(false);
  controller.abort();
  await expect(done).resolves.toBe(0);
  expect(errors).toEqual([]);
});

test('dispatchctl events shows a tool name and call id with terminal control sequences escaped, never raw', async () => {
  const lines: string[] = [];
  const controller = new AbortController();
  const done = eventsCommand(d.address, { session: 'esc' }, (l) => lines.push(l), controller.signal, () => undefined);
  for (let i = 0; i < 100 && lines.length === 0; i++) {
    await d.dispatch.dispatch({ sessionId: 'esc', turn: 1, calls: [{ id: 'probe', name: 'echo', arguments: '{}' }] });
    await new Promise((r) => setTimeout(r, 20));
  }
  await until(() => lines.some((l) => l.includes('TURN_END')), 'the probe');
  lines.length = 0;
  // Sets the clipboard (OSC 52), rings, clears the screen; then a C1 CSI (U+009B) turning text red.
  await d.dispatch.dispatch({ sessionId: 'esc', turn: 2, calls: [{ id: 'id 31m', name: '\x1b]52;c;cHduZWQ=\x07\x1b[2J', arguments: '{}' }] });
  await until(() => lines.some((l) => l.includes('TURN_END')), 'TURN_END of turn 2');
  controller.abort();
  await done;
  expect(lines.filter((l) => /[\u0000-\u001f\u007f-\u009f]/.test(l))).toEqual([]);
  // The event carries a made-up name escaped already (events/event-bounds.ts): shown as it came.
  expect(lines.find((l) => l.includes('CALL_RECEIVED'))).toMatch(/ call="id 31m" tool=\\u001b\]52;c;cHduZWQ=\\u0007\\u001b\[2J args=\{\}$/);
});

test('dispatchctl events refuses an unknown kind and reports a failed RPC', async () => {
  const errors: string[] = [];
  const code = await eventsCommand(d.address, { kinds: ['tool_post', 'NOPE'] }, () => undefined, new AbortController().signal, (l) => errors.push(l));
  expect(code).toBe(2);
  expect(errors[0]).toMatch(/^dispatchctl: unknown event kind "NOPE" \(one of CALL_RECEIVED, TOOL_PRE, /);
  expect(kindOf('tool_post')).toBe(EventKind.TOOL_POST);
  expect(kindOf('EVENT_KIND_RETRY')).toBe(EventKind.RETRY);
  expect(kindOf('unspecified')).toBeUndefined();
  const unreachable: string[] = [];
  const code2 = await eventsCommand('127.0.0.1:1', {}, () => undefined, AbortSignal.timeout(10_000), (l) => unreachable.push(l));
  expect(code2).toBe(1);
  expect(unreachable[0]).toMatch(/^dispatchctl: UNAVAILABLE: /);
});

test('dispatchctl events --follow subscribes again when the server restarts, and still stops on a refusal', async () => {
  let own = await startApp(YAML);
  const address = own.address;
  const lines: string[] = [];
  const errors: string[] = [];
  const controller = new AbortController();
  const done = eventsCommand(address, { session: 'f', kinds: ['tool_post'], follow: true }, (l) => lines.push(l), controller.signal, (l) => errors.push(l));
  const call = (id: string) => void own.dispatch.dispatch({ sessionId: 'f', calls: [{ id, name: 'echo', arguments: `{"id":"${id}"}` }] }).catch(() => undefined);
  try {
    await until(() => {
      call('before');
      return lines.some((l) => l.includes('call=before'));
    }, 'an event before the restart');
    await own.close();
    own = await serveApp(await buildApp(parseConfig(YAML, 'test.yaml'), { logger: SILENT_LOGGER }), undefined, address);
    await until(() => {
      call('after');
      return lines.some((l) => l.includes('call=after'));
    }, 'an event after the restart', 15_000);
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.every((l) => /^dispatchctl: (the server ended the stream|[A-Z_]+: .*); subscribing again in \d+ ms \(events meanwhile are not shown\)$/.test(l))).toBe(true);
    controller.abort();
    await expect(done).resolves.toBe(0);
  } finally {
    controller.abort();
    await own.close();
  }
  // A refusal (a wrong token) ends it even with --follow: another try would meet it again.
  const guarded = await startApp(`auth:\n  tokens:\n    - { tenant: a, scopes: [subscribe], sha256: ${'a'.repeat(64)} }\n${YAML}`);
  try {
    const refused: string[] = [];
    const code = await eventsCommand(guarded.address, { token: 'wrong', follow: true }, () => undefined, AbortSignal.timeout(10_000), (l) => refused.push(l));
    expect(code).toBe(1);
    expect(refused).toEqual([expect.stringMatching(/^dispatchctl: UNAUTHENTICATED: /)]);
  } finally {
    await guarded.close();
  }
});

test('the dispatchctl process: `events --session S --tool T --kind K` prints only matching events, and Ctrl-C ends it with 0', async () => {
  // The compiled CLI as users run it (`npm test` builds dist/ first), SIGINT as Ctrl-C sends it.
  const bin = join(__dirname, '..', '..', 'bin', 'dispatchctl.js');
  const child = spawn(process.execPath, [bin, '--address', d.address, '--session', 'proc', 'events', '--tool', 'echo', '--kind', 'tool_post'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  try {
    for (let i = 0; i < 250 && !stdout.includes('call=probe'); i++) {
      await d.dispatch.dispatch({ sessionId: 'proc', calls: [{ id: 'probe', name: 'echo', arguments: `{"i":${i}}` }] });
      await new Promise((r) => setTimeout(r, 20));
    }
    await until(() => stdout.includes('call=probe'), 'the probe in the CLI output');
    stdout = '';
    await d.dispatch.dispatch({ sessionId: 'other', calls: [{ id: 'elsewhere', name: 'echo', arguments: '{}' }] });
    await d.dispatch.dispatch({ sessionId: 'proc', calls: [{ id: 'loud', name: 'shout', arguments: '{}' }] });
    await d.dispatch.dispatch({ sessionId: 'proc', calls: [{ id: 'last', name: 'echo', arguments: '{}' }] });
    await until(() => stdout.includes('call=last'), 'the last call in the CLI output');
    const lines = stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} TOOL_POST session=proc turn=\d+ call=last tool=echo attempt=1 outcome=ok /);
    child.kill('SIGINT');
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([exited, new Promise((r) => (timer = setTimeout(() => r('still running after 5 s'), 5_000)))]);
    clearTimeout(timer);
    expect(code).toBe(0);
    expect(stderr).toBe('');
  } finally {
    child.kill('SIGKILL');
  }
});

test('the dispatchctl process refuses an unknown --kind with its usage code 2', async () => {
  const bin = join(__dirname, '..', '..', 'bin', 'dispatchctl.js');
  const child = spawn(process.execPath, [bin, '--address', d.address, 'events', '--kind', 'nope'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  expect(code).toBe(2);
  expect(stderr).toMatch(/unknown event kind "nope"/);
});
