import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startOtlpGrpcReceiver, type OtlpGrpcReceiver } from '../telemetry/otlp-grpc-receiver';
import { startWorkerApp, type WorkerApp } from '../workers/worker-app';
import { echoAnswer, eventually } from '../workers/worker-harness';

// Issue 6, traces: "a traceparent in the gRPC metadata continues the caller's trace, and is passed
// on to HTTP tools and workers". With traces on, the HTTP tool's header is checked to name the
// attempt's exported span (telemetry/traces); a worker's assignment only to carry the caller's trace
// id, with traces off, on one replica. Here, traces on: the assignment names the attempt span the
// OTLP receiver got, for a worker on the same replica and for one reached through Redis.

jest.setTimeout(60_000);

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';
const tool = { name: 'w_tp', inputSchema: '{"type":"object"}', effect: Effect.READ_ONLY, timeoutMs: 5_000 };
const saved = { ...process.env };

let receiver: OtlpGrpcReceiver;
let redis: TestRedis;
let a: WorkerApp;
let b: WorkerApp;
beforeAll(async () => {
  receiver = await startOtlpGrpcReceiver();
  redis = await startRedis({ own: true });
  Object.assign(process.env, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc', OTEL_BSP_SCHEDULE_DELAY: '20' });
  const options = { advertiseIntervalMs: 200, routeTtlMs: 1_000 };
  a = await startWorkerApp(options, { redisUrl: redis.url });
  b = await startWorkerApp(options, { redisUrl: redis.url });
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  process.env = saved;
  await receiver?.close();
  await redis?.close();
});

test.each([
  ['on the replica the call reached', () => a, 'local'],
  ['on another replica (through Redis)', () => b, 'remote'],
])("the worker's traceparent names the attempt's exported span under the caller's trace, %s", async (_label, via, id) => {
  const worker = await a.worker({ id: `w-${id}`, tools: [tool], answer: echoAnswer(id) });
  await eventually(async () => (await via().registry.listTools({})).tools.some((t) => t.name === 'w_tp'), 5_000, 'the tool listed');
  const { results } = await via().dispatch.dispatch({ sessionId: `tp-${id}`, calls: [{ id: `c-${id}`, name: 'w_tp', arguments: `{"n":"${id}"}` }] }, { metadata: { traceparent: `00-${TRACE}-${SPAN}-01` } });
  expect(results[0]!.isError).toBe(false);
  const assignment = worker.assignments.find((x) => x.call?.id === `c-${id}`)!;
  const match = new RegExp(`^00-${TRACE}-([0-9a-f]{16})-01$`).exec(assignment.traceparent);
  expect(match).not.toBeNull();
  const parent = match![1]!;
  await receiver.waitFor((r) => r.spans.some((s) => s.spanId === parent), 5_000);
  const attempt = receiver.spans.find((s) => s.spanId === parent)!;
  expect(attempt.name).toBe('tool_attempt w_tp');
  expect(attempt.traceId).toBe(TRACE);
  const call = receiver.spans.find((s) => s.spanId === attempt.parentSpanId);
  expect(call?.attributes['gen_ai.tool.call.id']).toBe(`c-${id}`);
  worker.disconnect();
});
