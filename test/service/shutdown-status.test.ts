import { status, type ServiceError } from '@grpc/grpc-js';
import { DispatchMode } from '../../gen/dispatch/v1/dispatch_pb';
import { errorReason } from '../guards/helpers';
import { startApp, startToolServer, type ToolServer } from '../helpers/servers';

// A Dispatch still running when the drain grace period ends is cut by dispatchd, not by its client:
// it ends UNAVAILABLE (clients retry it, on another replica), not CANCELLED (they do not).

jest.setTimeout(20_000);

let tools: ToolServer;
beforeAll(async () => {
  tools = await startToolServer({ '/hang': () => undefined });
});
afterAll(() => tools.close());

const yaml = () => `
tools:
  - name: hang
    effect: read_only
    timeout_ms: 10000
    http: { url: "${tools.url}/hang" }
`;

test.each([
  ['sequential', DispatchMode.SEQUENTIAL, 1],
  ['parallel', DispatchMode.PARALLEL, 2],
])('a %s turn running when the grace period ends is UNAVAILABLE SHUTTING_DOWN', async (_name, mode, count) => {
  const d = await startApp(yaml());
  try {
    const calls = Array.from({ length: count }, (_, i) => ({ id: `c${i}`, name: 'hang', arguments: '{}' }));
    const pending = d.dispatch.dispatch({ sessionId: 's', mode, calls }).then(() => undefined, (error: ServiceError) => error);
    await new Promise((r) => setTimeout(r, 300));
    await d.server.shutdown(300);
    const error = await pending;
    expect(error?.code).toBe(status.UNAVAILABLE);
    expect(error?.details).toBe('dispatchd is shutting down; retry (another replica will take the call)');
    expect(errorReason(error)).toBe('SHUTTING_DOWN');
  } finally {
    await d.close();
  }
});
