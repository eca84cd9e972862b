// Audit of src/client: createDispatchClient and createRegistryClient took no channel options, so
// an agent backend on the client could not set the retry policy (a service config) the examples
// set, nor a receive limit, without falling back to createServiceClient; the options were dropped.
import { status, type ServiceError } from '@grpc/grpc-js';
import { createDispatchClient, createRegistryClient } from '../../src/client';
import { startApp } from '../helpers/servers';
import { turnInFlight } from '../helpers/turn-in-flight';

const CONFIG = `tools:
  - name: echo
    effect: read_only
    input_schema: '{"type":"object"}'
    builtin: { name: echo }
  - name: sleep
    effect: read_only
    input_schema: '{"type":"object"}'
    builtin: { name: sleep }
limits:
  max_turns_in_flight: 1
`;
const RETRY = JSON.stringify({
  methodConfig: [{ name: [{ service: 'dispatch.v1.DispatchService', method: 'Dispatch' }], retryPolicy: { maxAttempts: 4, initialBackoff: '0.3s', maxBackoff: '1s', backoffMultiplier: 2, retryableStatusCodes: ['RESOURCE_EXHAUSTED'] } }],
});

let t: Awaited<ReturnType<typeof startApp>>;
beforeAll(async () => {
  t = await startApp(CONFIG);
});
afterAll(() => t.close());

test("createDispatchClient takes channel options: its retry policy sends a turn refused OVERLOADED again until it gets in", async () => {
  const client = createDispatchClient(t.address, undefined, { 'grpc.service_config': RETRY });
  try {
    const holder = await turnInFlight(t, 'holder', 500);
    const { results } = await client.dispatch({ sessionId: 'retried', calls: [{ id: 'e', name: 'echo', arguments: '{}' }] }, { deadlineMs: 10_000 });
    expect(results[0]).toMatchObject({ isError: false, output: '{}' });
    await holder.done;
  } finally {
    client.close();
  }
});

test('createRegistryClient takes channel options: a receive limit below an answer refuses it', async () => {
  const client = createRegistryClient(t.address, undefined, { 'grpc.max_receive_message_length': 16 });
  try {
    const error = (await client.listTools({}, { deadlineMs: 5_000 }).catch((e: unknown) => e)) as ServiceError;
    expect(error.code).toBe(status.RESOURCE_EXHAUSTED);
  } finally {
    client.close();
  }
});
