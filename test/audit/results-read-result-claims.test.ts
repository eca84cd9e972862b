import { codePointLength } from '../../src/pipeline';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp, startToolServer, type ToolServer } from '../helpers/servers';

// DESIGN section 11, claim by claim, through two replicas sharing Redis and one on the memory store:
// max_result_chars and ReadResult count code points; a result at the bound is whole, one over it
// is cut to exactly the bound, marker included; `limit` 0 reads 8,000 and any larger limit
// 65,536; next_offset == total_chars when the text is complete, past the end too (offsets are
// uint32: -1 from a client's int32 arrives as 4294967295); the handle lives its tool's ttl_seconds.
// No other test asserted the default and cap of `limit` or the uint32 ends through the service.

jest.setTimeout(60_000);

let tools: ToolServer;
let redis: TestRedis;
beforeAll(async () => {
  tools = await startToolServer({
    '/body': (req, res) => void res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(String((req.body.arguments as { text: string }).text)),
  });
  redis = await startRedis({ own: true });
});
afterAll(async () => {
  await tools?.close();
  await redis?.close();
});

const yaml = (url: string) => `tools:
  - name: body
    effect: read_only
    skip_memoize: true
    max_result_chars: 100
    idempotency: { ttl_seconds: 2 }
    http: { url: "${url}/body" }
`;
/** An astral character, a combining mark and CRLF: 5 code points, 6 UTF-16 units. */
const MIXED = '😀e\u0301\r\n';

describe.each(['memory', 'redis'])('%s store', (kind) => {
  test('bounds in code points; pages by code points with limit default 8,000 and cap 65,536; the handle lives its TTL', async () => {
    const a = await startApp(yaml(tools.url), kind === 'redis' ? { redisUrl: redis.url } : {});
    const b = kind === 'redis' ? await startApp(yaml(tools.url), { redisUrl: redis.url }) : a;
    try {
      const call = async (text: string) => (await a.dispatch.dispatch({ sessionId: `claims-${kind}`, calls: [{ id: 'c', name: 'body', arguments: JSON.stringify({ text }) }] })).results[0]!;
      const at = await call(MIXED.repeat(20));
      expect([at.output, at.truncated, at.resultHandle]).toEqual([MIXED.repeat(20), false, '']);

      const over = await call(`${MIXED.repeat(20)}x`);
      expect([codePointLength(over.output), over.truncated]).toEqual([100, true]);
      // 101 code points: a marker of 53 (54 omitted) leaves 47, a head of 24 and a tail of 23.
      expect(over.output).toBe(`${Array.from(MIXED.repeat(5)).slice(0, 24).join('')}\n\n... [54 characters omitted by dispatch layer] ...\n\n${Array.from(`${MIXED.repeat(20)}x`).slice(-23).join('')}`);

      const long = `${MIXED.repeat(20_000)}END`;
      const handle = (await call(long)).resultHandle;
      const points = Array.from(long);
      const read = (offset: number, limit: number) => b.dispatch.readResult({ resultHandle: handle, offset, limit });
      const first = await read(0, 0);
      expect([first.text, first.totalChars, first.nextOffset]).toEqual([points.slice(0, 8_000).join(''), 100_003, 8_000]);
      const capped = await read(3, 100_000);
      expect([capped.text, capped.nextOffset]).toEqual([points.slice(3, 3 + 65_536).join(''), 3 + 65_536]);
      const last = await read(capped.nextOffset, 65_536);
      expect([last.text, last.nextOffset, last.totalChars]).toEqual([points.slice(65_539).join(''), 100_003, 100_003]);
      for (const offset of [100_003, 100_004, 4_294_967_295]) {
        const past = await read(offset, 4_294_967_295);
        expect([past.text, past.nextOffset, past.totalChars]).toEqual(['', 100_003, 100_003]);
      }

      await new Promise((resolve) => setTimeout(resolve, 2_300));
      await expect(read(0, 10)).rejects.toMatchObject({ code: 5 });
    } finally {
      if (b !== a) await b.close();
      await a.close();
    }
  });
});
