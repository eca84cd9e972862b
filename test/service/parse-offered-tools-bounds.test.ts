import { status } from '@grpc/grpc-js';
import type * as grpc from '@grpc/grpc-js';
import { startDispatch, type TestDispatch } from '../helpers/servers';

// Dispatch refuses more than 10,000 offered tools, or one longer than a tool name may be
// (offered-tools-bounds.test.ts); ParseToolCalls, sent the same list for the same turn, took any:
// 4 MiB of short names were ~700,000 strings the parse put in a Set, ~0.5 s of the shared event
// loop per request (found in review). It now refuses them as Dispatch does.

let d: TestDispatch;
beforeAll(async () => {
  d = await startDispatch('tools: []\n');
});
afterAll(() => d.close());

const text = '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>';
const refusal = (offeredTools: string[]) =>
  d.dispatch.parseToolCalls({ text, offeredTools }, { deadlineMs: 20_000 }).then(
    () => undefined,
    (e: grpc.ServiceError) => e,
  );

test('more than 10,000 offered tools is INVALID_ARGUMENT, as for Dispatch (found in review)', async () => {
  const offeredTools = ['get_weather', ...Array.from({ length: 200_000 }, (_, i) => i.toString(36))];
  await expect(refusal(offeredTools)).resolves.toMatchObject({ code: status.INVALID_ARGUMENT, details: '200001 offered tools, over the limit of 10000' });
});

test('an offered name longer than 128 characters is INVALID_ARGUMENT, as for Dispatch (found in review)', async () => {
  await expect(refusal(['get_weather', 'x'.repeat(129)])).resolves.toMatchObject({
    code: status.INVALID_ARGUMENT,
    details: 'offered_tools[1] is 129 characters long, over the limit of 128 of a tool name',
  });
});

test('10,000 offered names of 128 characters are taken', async () => {
  const offeredTools = ['get_weather', ...Array.from({ length: 9_999 }, (_, i) => String(i).padEnd(128, 'z'))];
  const reply = await d.dispatch.parseToolCalls({ text, offeredTools }, { deadlineMs: 20_000 });
  expect(reply.calls.map((c) => c.name)).toEqual(['get_weather']);
});
