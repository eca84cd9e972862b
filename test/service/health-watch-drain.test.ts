import * as grpc from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import { startDispatch, startToolServer, type ToolServer } from '../helpers/servers';

// A drain sends NOT_SERVING to each open health Watch stream and then ends it, so the stream no
// longer holds the server: before, grpc-health-check never ended a Watch, and one open stream kept
// a draining dispatchd alive until its grace period ended, long after its last call had finished.

jest.setTimeout(20_000);

let tools: ToolServer;
beforeAll(async () => {
  tools = await startToolServer({ '/slow': (_, res) => void setTimeout(() => res.end('{"ok":true}'), 500) });
});
afterAll(() => tools.close());

type Watch = grpc.ClientReadableStream<{ status: string }>;
const HealthClient = grpc.makeGenericClientConstructor(healthService, 'Health');

test('a drain ends open health Watch streams after NOT_SERVING, and stops once the last call ends', async () => {
  const d = await startDispatch(`
tools:
  - name: slow
    effect: read_only
    http: { url: "${tools.url}/slow" }
`);
  const client = new HealthClient(`127.0.0.1:${d.server.port}`, grpc.credentials.createInsecure()) as unknown as { watch(request: object): Watch; close(): void };
  try {
    const seen: string[] = [];
    const watch = client.watch({ service: 'dispatch.v1.DispatchService' });
    const ended = new Promise<string>((resolve) => {
      watch.on('data', (reply: { status: string }) => seen.push(reply.status));
      watch.on('status', (s: grpc.StatusObject) => resolve(grpc.status[s.code]!));
      watch.on('error', () => undefined);
    });
    await new Promise((r) => setTimeout(r, 200));
    const call = d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c0', name: 'slow', arguments: '{}' }] });
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    await d.server.shutdown(10_000);
    const took = Date.now() - started;
    expect((await call).results[0]?.isError).toBe(false);
    expect(await ended).toBe('OK');
    expect(seen).toEqual(['SERVING', 'NOT_SERVING']);
    // The call had ~400 ms left; the open Watch held the server for the whole 10 s grace before.
    expect(took).toBeLessThan(3_000);
  } finally {
    client.close();
    await d.close();
  }
});
