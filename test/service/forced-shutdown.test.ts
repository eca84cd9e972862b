import type * as grpc from '@grpc/grpc-js';
import { createDispatchClient } from '../../src/client';
import { startDispatch } from '../helpers/servers';

// At the end of the grace period, shutdown ends every stream still open, whatever its handler
// does: grpc-js's forceShutdown() alone ends none while channelz is off (grpc-js 1.14), as
// dispatchd runs it, so a stream whose peer kept it open outlived the grace period.

jest.setTimeout(20_000);

test('streams still open when the grace period ends are cut, and shutdown returns', async () => {
  // A Subscribe whose handler never ends it (the events plugin would end its own at drain).
  const d = await startDispatch('tools: []\n', {}, { extraHandlers: { dispatch: { subscribe: () => undefined } } });
  const client = createDispatchClient(d.address);
  try {
    const stream = client.subscribe({});
    const ended = new Promise<number>((resolve) => {
      stream.on('error', () => undefined);
      stream.on('status', (s: grpc.StatusObject) => resolve(s.code));
    });
    await new Promise((r) => setTimeout(r, 200));
    const started = Date.now();
    await d.server.shutdown(300);
    // The grace period (300 ms), the 200 ms forceShutdown waits after it, and little more.
    expect(Date.now() - started).toBeLessThan(1_500);
    const outcome = await Promise.race([ended, new Promise<string>((r) => setTimeout(() => r('still open'), 1_000))]);
    expect(typeof outcome).toBe('number');
  } finally {
    client.close();
    await d.close();
  }
});
