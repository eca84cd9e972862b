import { startDispatch, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// With the memory store, a ReadResult page of a spill holding surrogate pairs walked the whole
// text (its length in code points, then to the page's offset) every call: 8 pages near the end
// of an 8 Mi-emoji result held the event loop 1.3 s. A spill now keeps an index of its chunks.

jest.setTimeout(60_000);

const MI = 1024 * 1024;
const EMOJI = 8 * MI - 10;

let tools: ToolServer;
let d: TestDispatch;
beforeAll(async () => {
  tools = await startToolServer({ '/emoji': (_req, res) => void res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(`${'😀'.repeat(EMOJI)}end`) });
  d = await startDispatch(`tools:
  - name: emoji
    effect: read_only
    skip_memoize: true
    http: { url: "${tools.url}/emoji" }
`);
});
afterAll(async () => {
  await d?.close();
  await tools?.close();
});

test('16 pages near the end of an 8 Mi-emoji result take well under the time of walking it once each', async () => {
  const { results } = await d.dispatch.dispatch({ sessionId: 'emoji', calls: [{ id: 'e', name: 'emoji', arguments: '{}' }] });
  const handle = results[0]!.resultHandle;
  expect(handle).not.toBe('');
  const total = EMOJI + 3;
  // Warm: the first call of a path compiles it.
  await d.dispatch.readResult({ resultHandle: handle, offset: 0, limit: 10 });
  const started = Date.now();
  const pages = await Promise.all(Array.from({ length: 16 }, (_, i) => d.dispatch.readResult({ resultHandle: handle, offset: total - 10 - i, limit: 10 })));
  const ms = Date.now() - started;
  expect(pages[0]).toEqual(expect.objectContaining({ text: `${'😀'.repeat(7)}end`, totalChars: total, nextOffset: total }));
  expect(pages[15]).toEqual(expect.objectContaining({ text: '😀'.repeat(10), nextOffset: total - 15 }));
  // Before: ~150 ms a page (2.4 s for 16, more on a busy machine); now a few ms each.
  expect(ms).toBeLessThan(800);
});
