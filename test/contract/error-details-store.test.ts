import * as grpc from '@grpc/grpc-js';
import { newResultHandle } from '../../src/store/result-handle';
import { useRedisApp } from '../helpers/redis-app';
import { failure } from './error-info';

jest.setTimeout(30_000);

// With its Redis gone, dispatch answers UNAVAILABLE STORE_UNAVAILABLE (retry the same request),
// not the bare UNAVAILABLE it shared with a dropped connection: a client tells it from SHUTTING_DOWN
// by the ErrorInfo reason in grpc-status-details-bin.

const env = useRedisApp({ routes: {}, config: () => 'limits: { store_timeout_ms: 300 }\ntools: []\n' });

test('EndSession and ReadResult with the store down are STORE_UNAVAILABLE, EndSession naming its session', async () => {
  await env.redis.stop('SIGKILL');
  try {
    await expectStoreUnavailable();
  } finally {
    await env.redis.start();
  }
});

async function expectStoreUnavailable(): Promise<void> {
  const deadline = { deadlineMs: 10_000 };
  expect(await failure(env.app.dispatch.endSession({ sessionId: 'gone-s' }, deadline))).toEqual({
    domain: 'dispatch.v1',
    code: grpc.status.UNAVAILABLE,
    details: 'the session store is unreachable; try again shortly',
    reason: 'STORE_UNAVAILABLE',
    metadata: { session_id: 'gone-s' },
    // A google.rpc.RetryInfo beside the ErrorInfo: wait a second (the store's timeout), then retry.
    retryDelayMs: 1000,
  });
  expect(await failure(env.app.dispatch.readResult({ resultHandle: newResultHandle('gone-s') }, deadline))).toMatchObject({ code: grpc.status.UNAVAILABLE, reason: 'STORE_UNAVAILABLE', retryDelayMs: 1000 });
}
