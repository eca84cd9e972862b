import { createDispatchClient } from '../../src/client';
import { startDaemon } from '../helpers/daemon';

// A Helm probe: SIGHUP (an operator's `kill -HUP 1` expecting a reload, which tini passes on; a
// closed terminal) ended dispatchd at once with Node's default action: exit 129, the call in
// flight cut off (`UNAVAILABLE: Connection dropped`) after its tool had run. dispatchd has no
// reload: SIGHUP now drains and stops as SIGTERM does.

test('SIGHUP finishes the call in flight, then exits 0', async () => {
  const daemon = await startDaemon([]);
  const client = createDispatchClient(`127.0.0.1:${daemon.port}`);
  try {
    const pending = client.dispatch({ sessionId: 's', calls: [{ id: 'c1', name: 'sleep', arguments: '{"ms":700}' }] });
    await new Promise((r) => setTimeout(r, 200));
    daemon.child.kill('SIGHUP');
    const { results } = await pending;
    expect(results[0]!.output).toBe('{"ms":700}');
    expect(await daemon.exited).toBe(0);
    // Said where an operator expecting a reload looks (a config author's probe: --help and the log were silent).
    expect(daemon.stderr()).toMatch(/"message":"draining","signal":"SIGHUP".*"note":"SIGHUP stops dispatchd: it does not reload/);
  } finally {
    client.close();
    daemon.child.kill('SIGKILL');
  }
});

test('--help says which signals stop dispatchd, and that SIGHUP does not reload', () => {
  const { spawnSync } = require('node:child_process') as typeof import('node:child_process');
  const out = spawnSync(process.execPath, [require('node:path').join(__dirname, '../../bin/dispatchd.js'), '--help'], { encoding: 'utf8' }).stdout;
  expect(out).toContain('signals:     SIGTERM, SIGINT and SIGHUP drain (--grace) and stop: dispatchd does not reload');
});
