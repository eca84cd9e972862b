import { status } from '@grpc/grpc-js';
import type * as grpc from '@grpc/grpc-js';
import { DispatchMode, ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startDispatch, type TestDispatch } from '../helpers/servers';

// Each call of a tool not offered lists offered tools back in its suggestion: 20 offered names of
// 150,000 characters and 128 such calls took the server from 125 MB to 1.24 GB and blocked its
// event loop 3-5 s (found fuzzing). Offered names longer than a tool name may be are refused; the
// list is of short names, bounded, built once per turn. A made-up name of 1 MB was also whole in
// the error's `tool` field, which max_result_chars does not bound.

let d: TestDispatch;
beforeAll(async () => {
  d = await startDispatch('tools:\n  - name: echo\n    effect: read_only\n    builtin: { name: echo }\n');
});
afterAll(() => d.close());

// Each with its own arguments: the same refused call ten times in a session ends the turn LOOP_DETECTED (refused-loops.ts).
const unknownCalls = (count: number) => Array.from({ length: count }, (_, i) => ({ id: `c${i}`, name: 'nope', arguments: JSON.stringify({ i }) }));

test.each([DispatchMode.SEQUENTIAL, DispatchMode.PARALLEL])('an offered name longer than 128 characters is INVALID_ARGUMENT at once (mode %s)', async (mode) => {
  const offeredTools = Array.from({ length: 20 }, (_, i) => String(i).padEnd(5_000, 'z'));
  const started = Date.now();
  const error = await d.dispatch.dispatch({ sessionId: 'long-offered', mode, offeredTools, calls: unknownCalls(128) }, { deadlineMs: 10_000 }).then(
    () => undefined,
    (e: grpc.ServiceError) => e,
  );
  expect(error).toMatchObject({ code: status.INVALID_ARGUMENT, details: 'offered_tools[0] is 5000 characters long, over the limit of 128 of a tool name' });
  expect(Date.now() - started).toBeLessThan(1_000);
});

test('offered names of 128 characters are accepted, and each suggestion lists them in at most ~2 KB', async () => {
  const offeredTools = ['echo', ...Array.from({ length: 9_999 }, (_, i) => String(i).padEnd(128, 'z'))];
  const started = Date.now();
  const { results } = await d.dispatch.dispatch({ sessionId: 'many-offered', offeredTools, calls: unknownCalls(128) }, { deadlineMs: 10_000 });
  expect(Date.now() - started).toBeLessThan(1_000);
  expect(results).toHaveLength(128);
  for (const result of results) {
    expect(result.error?.kind).toBe(ErrorKind.UNKNOWN_TOOL);
    expect(result.error?.suggestion).toMatch(/^Call one of the offered tools: echo, 0z+, 1z+, /);
    expect(result.error!.suggestion.length).toBeLessThanOrEqual(2_100);
    expect(result.output.length).toBeLessThan(3_000);
  }
});

test.each([
  ['no offered tools', []],
  ['offered tools', ['echo']],
])('an unknown tool name of 1 MB is shortened in the error output (%s)', async (_case, offeredTools) => {
  const name = 'q'.repeat(1_000_000);
  const { results } = await d.dispatch.dispatch({ sessionId: 'huge-name', offeredTools, calls: [{ id: 'c', name, arguments: '{}' }] }, { deadlineMs: 10_000 });
  const [result] = results;
  expect(result!.error?.kind).toBe(ErrorKind.UNKNOWN_TOOL);
  expect(result!.output.length).toBeLessThan(2_000);
  expect(JSON.parse(result!.output).tool).toBe(`${'q'.repeat(200)}...`);
  expect(result!.resolvedToolName.length).toBeLessThanOrEqual(203);
});
