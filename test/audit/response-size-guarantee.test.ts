import * as grpc from '@grpc/grpc-js';
import type { ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { parseConfig } from '../../src/config';
import { resolveLimits } from '../../src/options';
import { createMemoryStore, type Store } from '../../src/store';
import { startDispatch, type TestDispatch } from '../helpers/servers';

// Audit: a turn's results could overflow max_response_bytes after every call ran (side effects
// done, results lost). Each result cut to nothing still carried its 55-character marker, its handle,
// a ~140-character warning and its id: 128 of them took 31,261 bytes of a 16,384-byte message
// (RESOURCE_EXHAUSTED), and long call ids made it so at any setting. Now (1) a turn whose results
// cannot fit even cut to their least is refused before anything runs, (2) a max_response_bytes too
// small for max_calls_per_turn such results is refused at start, (3) fit-response cuts results to
// their least (a short marker and warning) when its shares leave the turn over, and a result cut to
// its marker alone no longer says "cut to 0 characters".

jest.setTimeout(60_000);

const LIMIT = 40_960;
let d: TestDispatch;
let runs = 0;
beforeAll(async () => {
  const shout = async (args: unknown) => {
    runs++;
    return 'A'.repeat((args as { n: number }).n) + 'END';
  };
  d = await startDispatch(
    `
limits: { max_message_bytes: ${LIMIT} }
tools:
  - name: shout
    effect: side_effect
    input_schema: '{"type":"object","properties":{"n":{"type":"integer"},"k":{"type":"integer"}}}'
    builtin: { name: shout }
`,
    { builtins: new Map([['shout', shout]]) },
  );
});
afterAll(() => d?.close());

const calls = (count: number, id: (k: number) => string) => Array.from({ length: count }, (_, k) => ({ id: id(k), name: 'shout', arguments: JSON.stringify({ n: 2_000, k }) }));
const responseBytes = (results: ToolResult[]) =>
  results.reduce((sum, r) => sum + Buffer.byteLength(r.toolCallId) + Buffer.byteLength(r.output) + Buffer.byteLength(r.resolvedToolName) + Buffer.byteLength(r.resultHandle) + r.warnings.reduce((s, w) => s + Buffer.byteLength(w), 0), 0);

async function readAll(handle: string): Promise<string> {
  let text = '';
  for (let offset = 0; ; ) {
    const page = await d.dispatch.readResult({ resultHandle: handle, offset, limit: 10_000 });
    text += page.text;
    if (page.nextOffset >= page.totalChars) return text;
    offset = page.nextOffset;
  }
}

test('128 results that the shares cut to their markers and still overflow are cut to their least: every result comes back, each whole via ReadResult', async () => {
  runs = 0;
  // A UUID session id (a 68-character handle) and 48-character call ids: ~323 bytes a result cut
  // to its marker, 42 KB in all. Before: RESOURCE_EXHAUSTED (Sent message larger than max (41877 vs. 40960), give or take the durations), after 128 runs.
  const sent = calls(128, (k) => `call_${String(k).padStart(43, '0')}`);
  const { results } = await d.dispatch.dispatch({ sessionId: '3f2c7a9e-5b1d-4e8f-9a6c-2d4b8e1f7c30', calls: sent });
  expect(runs).toBe(128);
  expect(results.map((r) => r.toolCallId)).toEqual(sent.map((c) => c.id));
  expect(responseBytes(results)).toBeLessThan(LIMIT);
  const least = results.filter((r) => r.output === '[2003 characters omitted]');
  expect(least.length).toBeGreaterThan(0);
  for (const result of results) {
    expect([result.isError, result.truncated, result.resultHandle !== '']).toEqual([false, true, true]);
    expect(result.warnings).toHaveLength(1);
    if (result.output === '[2003 characters omitted]') expect(result.warnings).toEqual(['cut to fit max_response_bytes; ReadResult has the rest']);
    else expect(result.warnings[0]).toMatch(/^the result was cut to its omission marker alone so that the turn's results fit in one response \(max_response_bytes\); read the rest with ReadResult$/);
  }
  expect(await readAll(least[0]!.resultHandle)).toBe(`${'A'.repeat(2_000)}END`);
  expect(await readAll(results[127]!.resultHandle)).toBe(`${'A'.repeat(2_000)}END`);
});

test("a result cut to its marker alone says so, not that it was cut to 0 characters (the output held the marker's 55)", async () => {
  // Short ids: 128 results cut to their markers fit (~31 KB) and are not cut further.
  const { results } = await d.dispatch.dispatch({ sessionId: 'w', calls: calls(128, (k) => `c${k}`) });
  expect(results.every((r) => r.output === '\n\n... [2003 characters omitted by dispatch layer] ...\n\n')).toBe(true);
  // Before: "the result was cut to 0 characters so that ...".
  expect(new Set(results.flatMap((r) => r.warnings))).toEqual(new Set(["the result was cut to its omission marker alone so that the turn's results fit in one response (max_response_bytes); read the rest with ReadResult"]));
});

test('a turn whose results cannot fit even cut to their least is refused INVALID_ARGUMENT before any call runs, naming the numbers and what to do', async () => {
  runs = 0;
  // 128 call ids of 200 characters: ~378 bytes a result at its least, 49 KB.
  const sent = calls(128, (k) => `${'i'.repeat(197)}${String(k).padStart(3, '0')}`);
  // Before: every call ran, then RESOURCE_EXHAUSTED (the results lost).
  const error = await d.dispatch.dispatch({ sessionId: 'long-ids', calls: sent }).then(
    () => undefined,
    (e: grpc.ServiceError) => e,
  );
  expect(runs).toBe(0);
  expect(error?.code).toBe(grpc.status.INVALID_ARGUMENT);
  expect(error?.details).toBe(
    'the results of 128 calls cannot fit in one response of max_response_bytes (40960) even cut to their least: with these call ids, names and session id they take 49408 bytes; nothing was run. Send at most ~105 calls per turn, shorter call ids or session id, or raise limits.max_response_bytes',
  );
  // The same calls fewer at a time run.
  const { results } = await d.dispatch.dispatch({ sessionId: 'long-ids', calls: sent.slice(0, 105) });
  expect([results.length, runs]).toEqual([105, 105]);
});

test('max_response_bytes too small for max_calls_per_turn results at their least is refused at start, with what to set', () => {
  // Before: taken, and a full turn of 128 calls lost its results (31,261 bytes vs. 16,384).
  expect(() => parseConfig('limits: { max_message_bytes: 16384 }\ntools: []\n', 'c.yaml')).toThrow(
    'c.yaml: limits.max_message_bytes: leaves too little room: max_response_bytes (16384, as max_message_bytes) cannot hold the results of max_calls_per_turn (128) calls even cut to their least (263 bytes each with typical ids, plus 1024 for the answer\'s framing: 34688); set max_calls_per_turn to 58 or less, or max_response_bytes to 34688 or more',
  );
  expect(() => parseConfig('limits: { max_response_bytes: 16384 }\ntools: []\n', 'c.yaml')).toThrow(
    "c.yaml: limits.max_response_bytes: leaves too little room: max_response_bytes (16384) cannot hold the results of max_calls_per_turn (128) calls even cut to their least (263 bytes each with typical ids, plus 1024 for the answer's framing: 34688); set max_calls_per_turn to 58 or less, or max_response_bytes to 34688 or more",
  );
  expect(() => resolveLimits({ maxCallsPerTurn: 20_000 })).toThrow(
    "limits.maxCallsPerTurn leaves too little room: max_response_bytes (4194304) cannot hold the results of max_calls_per_turn (20000) calls even cut to their least (263 bytes each with typical ids, plus 1024 for the answer's framing: 5261024); set max_calls_per_turn to 15944 or less, or max_response_bytes to 5261024 or more",
  );
  expect(parseConfig('limits: { max_message_bytes: 16384, max_calls_per_turn: 58 }\ntools: []\n', 'c.yaml').limits.maxResponseBytes).toBe(16_384);
  expect(resolveLimits({ maxResponseBytes: 34_688 }).maxResponseBytes).toBe(34_688);
  expect(resolveLimits().maxResponseBytes).toBe(4 * 1024 * 1024);
});

test('a bounded result cut to fit is cut from two pages of its stored text, not the whole text, and reads the same', async () => {
  // Code points the store hands fit-response (and ReadResult below), by read.
  const reads: string[] = [];
  const store = createMemoryStore();
  const counted: Store = Object.assign(Object.create(store) as Store, {
    readResult: async (tenant: string, handle: string) => {
      const text = await store.readResult(tenant, handle);
      reads.push(`whole ${text?.length}`);
      return text;
    },
    readResultPage: async (tenant: string, handle: string, offset: number, limit: number) => {
      const page = await store.readResultPage(tenant, handle, offset, limit);
      reads.push(`page ${page?.text.length}`);
      return page;
    },
  });
  const long = async (args: unknown) => `${'H'.repeat(100)}${'m'.repeat((args as { n: number }).n)}${'T'.repeat(100)}`;
  const bounded = await startDispatch(
    `
limits: { max_message_bytes: 65536 }
tools:
  - name: long
    effect: read_only
    skip_memoize: true
    max_result_chars: 40000
    input_schema: '{"type":"object"}'
    builtin: { name: long }
`,
    { builtins: new Map([['long', long]]), store: counted },
  );
  try {
    const sent = [0, 1].map((k) => ({ id: `c${k}`, name: 'long', arguments: JSON.stringify({ n: 2_000_000, k }) }));
    const { results } = await bounded.dispatch.dispatch({ sessionId: 'pages', calls: sent });
    // Before: ['whole 2000200', 'whole 2000200'] (each whole text read to keep ~32,000 code points of it).
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.every((read) => read.startsWith('page ') && Number(read.slice(5)) <= 32_768)).toBe(true);
    for (const result of results) {
      expect(result.output.startsWith('H'.repeat(100))).toBe(true);
      expect(result.output.endsWith('T'.repeat(100))).toBe(true);
      const omitted = /\n\n\.\.\. \[(\d+) characters omitted by dispatch layer\] \.\.\.\n\n/.exec(result.output);
      // The marker counts what the whole text lost, as when the whole was read.
      expect(Number(omitted![1])).toBe(2_000_200 - (result.output.length - omitted![0].length));
      expect(result.output.length).toBeGreaterThan(30_000);
      expect(result.warnings).toEqual([expect.stringMatching(/^the result was cut to \d+ characters so that the turn's results fit in one response \(max_response_bytes\); read the rest with ReadResult$/)]);
    }
  } finally {
    await bounded.close();
  }
});
