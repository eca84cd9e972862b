import * as grpc from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import { retainedHeap } from '../helpers/heap';
import { startDispatch, type TestDispatch } from '../helpers/servers';

// The health service needs no credentials, and its request names a service: any text, up to
// max_message_bytes. grpc-health-check keyed its Watch listeners by that name and never dropped a
// name once its Watch ended, and its Check echoed an unknown name whole in the status message.
// Only '' and dispatch.v1.DispatchService are reported (HEALTH_SERVICES): any other name is
// SERVICE_UNKNOWN on Watch and NOT_FOUND on Check, and nothing of it is kept or echoed whole.

jest.setTimeout(60_000);

type Watch = grpc.ClientReadableStream<{ status: string }>;
interface HealthClient {
  watch(request: object): Watch;
  check(request: object, options: grpc.CallOptions, callback: (error: grpc.ServiceError | null, reply?: { status: string }) => void): void;
  close(): void;
}
const HealthClientConstructor = grpc.makeGenericClientConstructor(healthService, 'Health');

let d: TestDispatch;
let client: HealthClient;
beforeAll(async () => {
  d = await startDispatch('tools: []');
  client = new HealthClientConstructor(`127.0.0.1:${d.server.port}`, grpc.credentials.createInsecure(), { 'grpc.max_receive_message_length': -1 }) as unknown as HealthClient;
});
afterAll(async () => {
  client.close();
  await d.close();
});

/** Watches `service` until its first status, then cancels; the status seen. */
async function watchOnce(service: string): Promise<string> {
  const watch = client.watch({ service });
  const first = await new Promise<string>((resolve, reject) => {
    watch.once('data', (reply: { status: string }) => resolve(reply.status));
    watch.on('error', (error: grpc.ServiceError) => (error.code === grpc.status.CANCELLED ? undefined : reject(error)));
  });
  watch.cancel();
  return first;
}

test('Watch streams of made-up service names keep nothing once they end', async () => {
  await watchOnce('warm-up');
  await new Promise((r) => setTimeout(r, 200));
  const before = retainedHeap();
  for (let i = 0; i < 40; i++) expect(await watchOnce(`${i}:${'x'.repeat(1 << 20)}`)).toBe('SERVICE_UNKNOWN');
  // The server sees each cancel a moment later.
  await new Promise((r) => setTimeout(r, 500));
  const grown = retainedHeap() - before;
  // Before, each name was a key of grpc-health-check's watchers map for good: ~40 MiB.
  expect(grown).toBeLessThan(8 * 1024 * 1024);
});

test('a Watch of a reported service still follows its status', async () => {
  expect(await watchOnce('')).toBe('SERVING');
  expect(await watchOnce('dispatch.v1.DispatchService')).toBe('SERVING');
});

test("Check of a made-up service name is NOT_FOUND without echoing the name whole", async () => {
  const name = 'y'.repeat(100_000);
  const error = await new Promise<grpc.ServiceError | null>((resolve) =>
    client.check({ service: name }, { deadline: Date.now() + 5_000 }, (e) => resolve(e)),
  );
  // Before, the 100 KB name went into grpc-message: past the client's header limit, it never
  // arrived and the call waited for its deadline.
  expect(error?.code).toBe(grpc.status.NOT_FOUND);
  expect(error!.details.length).toBeLessThan(1_000);
  const known = await new Promise<string | undefined>((resolve) => client.check({ service: '' }, {}, (_e, reply) => resolve(reply?.status)));
  expect(known).toBe('SERVING');
});
