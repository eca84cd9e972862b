import { status } from '@grpc/grpc-js';
import { createDispatchClient, createRegistryClient } from '../../src/client';
import { wellFormed } from '../../src/server/grpc-adapter';
import { startDaemon } from '../helpers/daemon';

// Error messages quote what a caller sent, cut to a bound by UTF-16 units: a cut through an emoji
// leaves half of it, and grpc-js threw sending such a status (encodeURI), which ended dispatchd.

jest.setTimeout(30_000);

test('lone surrogates become U+FFFD; whole pairs and plain text are kept', () => {
  expect(wellFormed('a😀b')).toBe('a😀b');
  expect(wellFormed(`x${'😀'.slice(0, 1)}`)).toBe('x\uFFFD');
  expect(wellFormed(`${'😀'.slice(1)}y`)).toBe('\uFFFDy');
  expect(wellFormed('plain')).toBe('plain');
});

test('a request whose quoted text is cut through an emoji gets its error, and dispatchd goes on', async () => {
  const daemon = await startDaemon([]);
  const dispatch = createDispatchClient(`127.0.0.1:${daemon.port}`);
  const registry = createRegistryClient(`127.0.0.1:${daemon.port}`);
  try {
    await expect(dispatch.readResult({ resultHandle: `${'a'.repeat(99)}😀` })).rejects.toMatchObject({ code: status.NOT_FOUND });
    await expect(registry.getToolStats({ tool: `${'t'.repeat(199)}😀` })).rejects.toMatchObject({ code: status.NOT_FOUND });
    const alive = await Promise.race([daemon.exited.then(() => 'exited'), new Promise((r) => setTimeout(() => r('running'), 500))]);
    expect(alive).toBe('running');
    await expect(dispatch.readResult({ resultHandle: 'none' })).rejects.toMatchObject({ code: status.NOT_FOUND });
  } finally {
    dispatch.close();
    registry.close();
    daemon.child.kill('SIGKILL');
  }
});
