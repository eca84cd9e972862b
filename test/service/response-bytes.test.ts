import { parseConfig } from '../../src/config';
import { DEFAULT_LIMITS, resolveLimits } from '../../src/options';
import { startApp, startDispatch, type TestDispatch } from '../helpers/servers';
import { until } from '../helpers/until';

// Every answer sized to fit one response is sized to limits.max_response_bytes: what gRPC clients
// receive by default (4 MiB), not max_message_bytes (what dispatch receives). Dispatch itself:
// test/e2e-python/response-bound.test.ts.

jest.setTimeout(60_000);

const MiB = 1024 * 1024;
const opened: TestDispatch[] = [];
afterAll(async () => {
  for (const d of opened) await d.close();
});
const start = async (yaml: string, builtins?: Map<string, (args: unknown) => Promise<string>>) => {
  const d = builtins ? await startDispatch(yaml, { builtins }) : await startApp(yaml);
  opened.push(d);
  return d;
};

test('max_response_bytes is 4 MiB, or max_message_bytes when lower, may not pass max_message_bytes, and when set is at least 16 KiB (or max_message_bytes, if lower)', () => {
  expect(DEFAULT_LIMITS.maxResponseBytes).toBe(4 * MiB);
  expect(resolveLimits({ maxMessageBytes: 16 * MiB }).maxResponseBytes).toBe(4 * MiB);
  expect(resolveLimits({ maxMessageBytes: 65_536 }).maxResponseBytes).toBe(65_536);
  expect(resolveLimits({ maxMessageBytes: 16 * MiB, maxResponseBytes: 16 * MiB }).maxResponseBytes).toBe(16 * MiB);
  expect(() => resolveLimits({ maxMessageBytes: 65_536, maxResponseBytes: 65_537 })).toThrow('limits.maxResponseBytes must be at most max_message_bytes (65536), the largest message grpc-js sends, got 65537');
  expect(() => parseConfig('limits: { max_response_bytes: 8388608 }\ntools: []\n', 'd.yaml')).toThrow('d.yaml: limits.max_response_bytes: must be at most max_message_bytes (4194304), the largest message grpc-js sends, got 8388608');
  expect(() => parseConfig('limits: { max_response_bytes: 0 }\ntools: []\n', 'd.yaml')).toThrow('d.yaml: limits.max_response_bytes: must be a positive integer, got 0');
  // At 1,024 every result was cut to 0 characters and ReadResult gave 1 code point a page.
  expect(() => parseConfig('limits: { max_response_bytes: 1024 }\ntools: []\n', 'd.yaml')).toThrow("d.yaml: limits.max_response_bytes: must be at least 16384 (room for a turn's results besides the answer's framing, and ReadResult pages of thousands of characters), got 1024");
  // With as few calls per turn as such a response holds at their least (response-room).
  expect(resolveLimits({ maxResponseBytes: 16_384, maxCallsPerTurn: 32 }).maxResponseBytes).toBe(16_384);
  expect(resolveLimits({ maxMessageBytes: 8_192, maxResponseBytes: 8_192, maxCallsPerTurn: 16 }).maxResponseBytes).toBe(8_192);
  expect(resolveLimits({ maxMessageBytes: 8_192, maxCallsPerTurn: 16 }).maxResponseBytes).toBe(8_192);
});

test('a ParseToolCalls answer past max_response_bytes is a clear RESOURCE_EXHAUSTED, even under max_message_bytes; raised, it comes back whole', async () => {
  const text = 'x'.repeat(5 * MiB);
  const d = await start('limits: { max_message_bytes: 16777216 }\ntools: []\n');
  // Before: answered whole, 5 MiB, which a client with the default receive limit refuses.
  await expect(d.dispatch.parseToolCalls({ text })).rejects.toMatchObject({
    code: 8,
    details: expect.stringMatching(/^the answer takes 52428\d\d bytes, over max_response_bytes \(4194304\): its remaining text \(5242880 characters, no call found\); send the text in smaller parts$/),
  });
  const raised = await start('limits: { max_message_bytes: 16777216, max_response_bytes: 16777216 }\ntools: []\n');
  expect((await raised.dispatch.parseToolCalls({ text })).remainingText).toHaveLength(5 * MiB);
});

test('a ReadResult page fits in max_response_bytes: 64 KiB of it take (65536 - 1024) / 4 = 16,128 code points', async () => {
  const long = async () => 'B'.repeat(200_000);
  const yaml = `limits: { max_response_bytes: 65536 }
tools:
  - name: long
    effect: read_only
    max_result_chars: 1000
    input_schema: '{"type":"object"}'
    builtin: { name: long }
`;
  const d = await start(yaml, new Map([['long', long]]));
  const [result] = (await d.dispatch.dispatch({ sessionId: 'read', calls: [{ id: 'c', name: 'long', arguments: '{}' }] })).results;
  expect([result!.truncated, result!.resultHandle === '']).toEqual([true, false]);
  // Before: 65,536 (a page was bounded by max_message_bytes, 4 MiB).
  const page = await d.dispatch.readResult({ resultHandle: result!.resultHandle, offset: 0, limit: 65_536 });
  expect([page.text.length, page.nextOffset, page.totalChars]).toEqual([16_128, 16_128, 200_000]);
});

test('a ListApprovals answer holds no more than fit in max_response_bytes, and says it was cut', async () => {
  const yaml = `limits: { max_response_bytes: 16384, max_calls_per_turn: 32 }
tools:
  - name: refund
    effect: side_effect
    input_schema: '{"type":"object"}'
    builtin: { name: echo }
policies:
  - match: refund
    decide: ask
    reason: refunds need an ok
`;
  const d = await start(yaml);
  const note = 'x'.repeat(7_000);
  const pending = Array.from({ length: 12 }, (_, i) => d.dispatch.dispatch({ sessionId: `big${i}`, interactive: true, calls: [{ id: `b${i}`, name: 'refund', arguments: JSON.stringify({ note }) }] }));
  try {
    // 12 waits of ~2.1 KB each (arguments cut at 2,000 characters): ~25 KB, over 16 KiB. Before: all 12, not truncated.
    const answer = await until(async () => {
      const found = await d.dispatch.listApprovals({});
      return found.truncated || found.approvals.length === 12 ? found : undefined;
    }, '12 waits listed, or a truncated answer', 10_000);
    expect(answer.truncated).toBe(true);
    expect(answer.approvals.length).toBeGreaterThanOrEqual(5);
    expect(answer.approvals.length).toBeLessThan(8);
  } finally {
    for (let i = 0; i < 12; i++) await d.dispatch.endSession({ sessionId: `big${i}` });
    await Promise.all(pending);
  }
});
