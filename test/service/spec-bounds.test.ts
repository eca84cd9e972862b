import { status } from '@grpc/grpc-js';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startDispatch, type TestDispatch } from '../helpers/servers';

// Tool specs whose numbers would break the call at run time are refused at registration (found in
// review): NaN jitter or multiplier, a backoff past Node's 2^31 ms timer limit (a 23-day backoff
// fired after 1 ms), a result cap too small for the omission marker.

let d: TestDispatch;
beforeAll(async () => {
  d = await startDispatch('tools: []\n');
});
afterAll(() => d.close());

const spec = (extra: object) => ({ name: 'bad', effect: Effect.READ_ONLY, inputSchema: '{"type":"object"}', executor: { case: 'builtin' as const, value: { name: 'echo' } }, ...extra });

test.each([
  [{ retry: { jitter: Number.NaN } }, 'tools[0]: tool "bad": retry.jitter must be between 0 and 1'],
  [{ retry: { backoffMultiplier: Number.NaN } }, 'tools[0]: tool "bad": retry.backoff_multiplier must be between 1 and 100'],
  [{ retry: { backoffMultiplier: 1e9 } }, 'tools[0]: tool "bad": retry.backoff_multiplier must be between 1 and 100'],
  [{ retry: { initialBackoffMs: 2_000_000_000 } }, 'tools[0]: tool "bad": retry.initial_backoff_ms must be at most 3600000 (an hour), got 2000000000'],
  [{ retry: { maxBackoffMs: 3_600_001 } }, 'tools[0]: tool "bad": retry.max_backoff_ms must be at most 3600000 (an hour), got 3600001'],
  [{ maxResultChars: 1 }, 'tools[0]: tool "bad": max_result_chars must be at least 100 (the omission marker alone takes up to 60), got 1'],
])('%j is INVALID_ARGUMENT', async (extra, message) => {
  await expect(d.registry.registerTools({ tools: [spec(extra)] })).rejects.toMatchObject({ code: status.INVALID_ARGUMENT, details: message });
});

test('the bounds themselves are accepted, and 0 still means the default', async () => {
  await expect(d.registry.registerTools({ tools: [spec({ retry: { jitter: 1, backoffMultiplier: 100, initialBackoffMs: 3_600_000, maxBackoffMs: 3_600_000 }, maxResultChars: 100 })] })).resolves.toMatchObject({ registered: 1 });
  await expect(d.registry.registerTools({ tools: [spec({ retry: { jitter: 0, backoffMultiplier: 0 }, maxResultChars: 0 })], replace: true })).resolves.toMatchObject({ registered: 1 });
});
