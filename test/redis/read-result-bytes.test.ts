import { useRedisApp } from '../helpers/redis-app';

// Every ReadResult page over Redis read the whole spilled text (one GET) to send a page of it: a
// 10-character page of an 8 MiB result moved 8 MiB out of Redis, and reading it all in 64 Ki
// pages moved ~1 GiB; a few such readers at once stalled every replica's store steps. A spill is
// now kept in chunks and a page reads the chunks it spans.

jest.setTimeout(120_000);

const MIB = 1024 * 1024;

const env = useRedisApp({
  routes: {
    '/big': (req, res) => {
      const { mib } = req.body.arguments as { mib: number };
      res.writeHead(200).end(`head:${'x'.repeat(mib * MIB - 10)}:tail`);
    },
  },
  config: (url) => `tools:
  - name: big
    effect: read_only
    skip_memoize: true
    http: { url: "${url}/big" }
`,
});

/** Bytes Redis has sent to its clients since it started (INFO stats). */
function sentBytes(): number {
  return Number(/total_net_output_bytes:(\d+)/.exec(env.redis.cli('INFO', 'stats'))![1]);
}

test('a ReadResult page moves about a page out of Redis, not the whole result; all pages move about the result once', async () => {
  const { results } = await env.app.dispatch.dispatch({ sessionId: 'bytes', calls: [{ id: 'b', name: 'big', arguments: JSON.stringify({ mib: 8 }) }] });
  const handle = results[0]!.resultHandle;
  expect(results[0]).toMatchObject({ truncated: true, isError: false });
  expect(handle).not.toBe('');
  const total = 8 * MIB + 0;

  const before = sentBytes();
  const page = await env.app.dispatch.readResult({ resultHandle: handle, offset: total - 10, limit: 10 });
  const moved = sentBytes() - before;
  expect(page).toMatchObject({ text: 'xxxxx:tail', totalChars: total, nextOffset: total });
  // Before: 8 MiB and more. A page spans at most two chunks (8 Ki code points each), and the INFO
  // reply itself counts.
  expect(moved).toBeLessThan(128 * 1024);

  const start = sentBytes();
  let offset = 0;
  let text = '';
  for (let pages = 0; offset < total && pages < 200; pages++) {
    const next = await env.app.dispatch.readResult({ resultHandle: handle, offset, limit: 65_536 });
    text += next.text;
    offset = next.nextOffset;
  }
  expect(text.length).toBe(total);
  expect(text.startsWith('head:x') && text.endsWith('x:tail')).toBe(true);
  // Before: ~1 GiB (128 pages of 8 MiB).
  expect(sentBytes() - start).toBeLessThan(total * 1.25);
});
