import { status } from '@grpc/grpc-js';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startDispatch, type TestDispatch } from '../helpers/servers';

// A privacy review's finding: a tenant registering a tool set `idempotency.ttl_seconds: 3153600000`,
// and its idempotency records and stored full results (its outputs, user data) were kept 100 years;
// no bound, no operator cap. It is now at most 30 days, for a tenant's tool and the config file's.

let d: TestDispatch;
beforeAll(async () => {
  d = await startDispatch('tools: []\n');
});
afterAll(() => d.close());

const spec = (ttlSeconds: number) => ({ name: 'kept', effect: Effect.SIDE_EFFECT, inputSchema: '{"type":"object"}', idempotency: { ttlSeconds }, executor: { case: 'builtin' as const, value: { name: 'echo' } } });

test('a registration past 30 days is INVALID_ARGUMENT, saying the bound; 30 days and 0 (the default) are taken', async () => {
  await expect(d.registry.registerTools({ tools: [spec(3_153_600_000)] })).rejects.toMatchObject({
    code: status.INVALID_ARGUMENT,
    details: 'tools[0]: tool "kept": idempotency.ttl_seconds must be at most 2592000 (30 days: records and stored results hold the tool\'s outputs that long), got 3153600000',
  });
  await expect(d.registry.registerTools({ tools: [spec(2_592_000)] })).resolves.toMatchObject({ registered: 1 });
  await expect(d.registry.registerTools({ tools: [spec(0)], replace: true })).resolves.toMatchObject({ registered: 1 });
});

test("a config file's tool past 30 days does not start, naming it", async () => {
  await expect(
    startDispatch(`
tools:
  - name: kept
    effect: side_effect
    input_schema: '{"type":"object"}'
    idempotency: { ttl_seconds: 2592001 }
    builtin: { name: echo }
`),
  ).rejects.toThrow(/tool "kept": idempotency\.ttl_seconds must be at most 2592000/);
});
