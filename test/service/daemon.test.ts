import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDispatchClient } from '../../src/client';
import { runDaemon, startDaemon } from '../helpers/daemon';
import { failedStart } from '../helpers/startup-line';

const dir = mkdtempSync(join(tmpdir(), 'dispatchd-test-'));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

/**
 * Waits for `client`'s connection to be up (a quick call answered), so that the call a test sends
 * next reaches the daemon before its SIGTERM: a connection still being made when the signal came
 * was refused (ECONNREFUSED) under load (two test runs at once), failing the test before any drain.
 */
async function connected(client: ReturnType<typeof createDispatchClient>): Promise<void> {
  await client.dispatch({ sessionId: 'warm', calls: [{ id: 'w', name: 'echo', arguments: '{}' }] });
}

test.each([
  ['unknown.yaml', 'tools: []\nlistn: 1\n', 'listn: unknown key "listn" (expected one of tools, limits, auth, policies, mcp_servers, telemetry, redis, registry, redaction)'],
  ['negative.yaml', 'tools:\n  - name: a\n    timeout_ms: -5\n    builtin: { name: echo }\n', 'tools[0].timeout_ms: must be a non-negative integer, got -5'],
  ['key.yaml', 'tools:\n  - name: a\n    retries: 3\n    builtin: { name: echo }\n', 'tools[0].retries: unknown key "retries"'],
  ['schema.yaml', 'tools:\n  - name: a\n    input_schema: \'{"type": 5}\'\n    builtin: { name: echo }\n', 'tools[0] ("a"): input_schema does not compile'],
  ['yaml.yaml', 'tools: [\n', 'line'],
])('a bad config file (%s) exits non-zero naming the file, the path and the problem', async (name, text, message) => {
  const path = file(name, text);
  const failure = failedStart(await runDaemon(['--config', path, '--listen', '127.0.0.1:0']));
  expect(failure).toEqual({ exit: 1, level: 'error', code: 'invalid_config', message: expect.stringContaining(path) });
  expect(failure.message).toContain(message);
});

test('a missing config file is named', async () => {
  const run = await runDaemon(['--config', join(dir, 'nope.yaml')]);
  expect(failedStart(run)).toEqual({ exit: 1, level: 'error', code: 'invalid_config', message: expect.stringContaining(`${join(dir, 'nope.yaml')}: cannot read the file (ENOENT)`) });
});

test('refuses to listen beyond loopback without auth unless --insecure', async () => {
  const run = await runDaemon(['--listen', '0.0.0.0:0']);
  expect(failedStart(run)).toEqual({ exit: 2, level: 'error', code: 'insecure_listen', message: expect.stringContaining('refusing to listen on 0.0.0.0:0 without authentication') });
});

test('SIGTERM finishes the call in flight, then exits 0', async () => {
  const daemon = await startDaemon([]);
  const client = createDispatchClient(`127.0.0.1:${daemon.port}`);
  try {
    await connected(client);
    const pending = client.dispatch({ sessionId: 's', calls: [{ id: 'c1', name: 'sleep', arguments: '{"ms":700}' }] });
    await new Promise((r) => setTimeout(r, 200));
    daemon.child.kill('SIGTERM');
    const { results } = await pending;
    expect(results[0]!.isError).toBe(false);
    expect(results[0]!.output).toBe('{"ms":700}');
    expect(await daemon.exited).toBe(0);
  } finally {
    client.close();
    daemon.child.kill('SIGKILL');
  }
});

test('a second SIGTERM (or SIGINT) during the drain is logged and the drain goes on: the call in flight finishes', async () => {
  const daemon = await startDaemon([]);
  const client = createDispatchClient(`127.0.0.1:${daemon.port}`);
  try {
    await connected(client);
    const pending = client.dispatch({ sessionId: 's', calls: [{ id: 'c1', name: 'sleep', arguments: '{"ms":900}' }] });
    await new Promise((r) => setTimeout(r, 200));
    daemon.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 200));
    daemon.child.kill('SIGTERM');
    daemon.child.kill('SIGINT');
    const { results } = await pending;
    expect(results[0]!.output).toBe('{"ms":900}');
    expect(await daemon.exited).toBe(0);
    expect(daemon.stderr().match(/stop signal again: already stopping/g)).toHaveLength(2);
  } finally {
    client.close();
    daemon.child.kill('SIGKILL');
  }
});

test('SIGTERM cancels calls still running after the grace period and exits 0', async () => {
  const daemon = await startDaemon(['--grace', '300']);
  const client = createDispatchClient(`127.0.0.1:${daemon.port}`);
  try {
    await connected(client);
    const pending = client.dispatch({ sessionId: 's', calls: [{ id: 'c1', name: 'sleep', arguments: '{"ms":4000}' }] }).catch((e: Error) => e);
    await new Promise((r) => setTimeout(r, 200));
    const sent = Date.now();
    daemon.child.kill('SIGTERM');
    expect(await daemon.exited).toBe(0);
    expect(Date.now() - sent).toBeLessThan(2500);
    expect(await pending).toBeInstanceOf(Error);
  } finally {
    client.close();
    daemon.child.kill('SIGKILL');
  }
});
