import type { ServiceError } from '@grpc/grpc-js';
import { startApp, startToolServer, type ToolServer } from '../helpers/servers';

// Without auth every turn is tenant `default`, so limits.max_argument_chars_in_flight_per_tenant
// bounds the whole replica: by default, without auth, the whole max_argument_chars_in_flight (32 Mi;
// three quarters with auth, test/security/single-tenant-defaults.test.ts). At half, 8 of 24 turns
// of ~1 MB of arguments, all admitted before the share, were refused.

jest.setTimeout(30_000);

let tools: ToolServer;
beforeAll(async () => {
  tools = await startToolServer({ '/slow': (_req, res) => void setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'), 1000) });
});
afterAll(() => tools.close());

test('one tenant (no auth) runs 24 turns of ~1 MB of arguments at once under the default bounds', async () => {
  const app = await startApp(`
tools:
  - name: slow
    effect: read_only
    timeout_ms: 5000
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/slow" }
`);
  try {
    const big = 'y'.repeat(1_000_000);
    const outcomes = await Promise.all(
      [...Array(24).keys()].map((i) =>
        app.dispatch
          .dispatch({ sessionId: `s${i}`, calls: [{ id: 'c', name: 'slow', arguments: JSON.stringify({ i, big }) }] })
          .then((r) => (r.results[0]!.isError ? 'error' : 'ok'), (e: ServiceError) => `code ${e.code}`),
      ),
    );
    expect(outcomes).toEqual(Array(24).fill('ok'));
  } finally {
    await app.close();
  }
});
