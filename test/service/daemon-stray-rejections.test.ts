import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDispatchClient } from '../../src/client';
import { startDaemon } from '../helpers/daemon';

// A promise rejected with no handler (a library's fire-and-forget command, say) ends a Node
// process by default: dispatchd logs it as the bug it is and goes on serving. The real daemon,
// with a preloaded module that makes such rejections on SIGUSR2.

jest.setTimeout(30_000);

const preload = join(mkdtempSync(join(tmpdir(), 'dispatchd-stray-')), 'stray.js');
writeFileSync(preload, "process.on('SIGUSR2', () => { for (let i = 0; i < 12; i++) Promise.reject(new Error('boom from a library ' + i)); });\n");

test('a stray rejection is logged at error level (at most 10 a minute) and dispatchd serves on', async () => {
  const daemon = await startDaemon([], { NODE_OPTIONS: `--require ${preload}` });
  const client = createDispatchClient(`127.0.0.1:${daemon.port}`);
  try {
    daemon.child.kill('SIGUSR2');
    await new Promise((r) => setTimeout(r, 500));
    const { results } = await client.dispatch({ sessionId: 's', calls: [{ id: 'c1', name: 'echo', arguments: '{"text":"still here"}' }] });
    expect(results[0]!.isError).toBe(false);
    const lines = daemon.stderr().split('\n').filter((line) => line.includes('a promise was rejected with no handler'));
    expect(lines).toHaveLength(10);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'error', error: 'boom from a library 0' });
    daemon.child.kill('SIGTERM');
    expect(await daemon.exited).toBe(0);
  } finally {
    client.close();
    daemon.child.kill('SIGKILL');
  }
});
