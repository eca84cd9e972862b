import { useRedisApp } from '../helpers/redis-app';

// The whole texts of bounded results (spills, read back with ReadResult) share Redis with the
// idempotency records, and a Redis with maxmemory and noeviction refuses every write once full:
// spills filled it and side-effecting calls then failed STORE_UNAVAILABLE. Spills now stop at
// half of maxmemory; the results past it say their full text was not kept.

jest.setTimeout(60_000);

const MIB = 1024 * 1024;

const env = useRedisApp({
  redis: { own: true, extraArgs: ['--maxmemory', '20mb', '--maxmemory-policy', 'noeviction'] },
  routes: {
    '/dump': (req, res) => {
      const { n, size } = req.body.arguments as { n: number; size: number };
      res.writeHead(200).end(`${n}:`.padEnd(size, 'x'));
    },
    '/pay': (_req, res) => void res.writeHead(200).end('paid'),
  },
  config: (url) => `tools:
  - name: dump
    effect: read_only
    http: { url: "${url}/dump" }
  - name: note
    effect: read_only
    builtin: { name: echo }
  - name: pay
    effect: side_effect
    http: { url: "${url}/pay" }
`,
});

test('after many large results, a side-effecting call still claims and runs once; the large results past the room say their full text was not kept', async () => {
  // Ever smaller results, so that the spills (before) filled every byte up to maxmemory.
  const sizes = [MIB, 128 * 1024, 16 * 1024, 9000].flatMap((size) => Array<number>(20).fill(size));
  const dumps = [];
  for (const [n, size] of sizes.entries()) {
    const { results } = await env.app.dispatch.dispatch({ sessionId: 'spills', calls: [{ id: `d${n}`, name: 'dump', arguments: JSON.stringify({ n, size }) }] });
    dumps.push(results[0]!);
  }
  // The first ones keep their whole text, readable through their handle.
  expect(dumps[0]).toMatchObject({ isError: false, truncated: true, warnings: [] });
  const page = await env.app.dispatch.readResult({ resultHandle: dumps[0]!.resultHandle, offset: 0, limit: 16 });
  expect(page).toMatchObject({ text: '0:xxxxxxxxxxxxxx', totalChars: MIB });
  // The others are bounded with no handle, and say why; 20 MiB do not fit in 20 MB, so at least
  // the last 10 of the 1 MiB results are among them.
  for (const [n, dump] of dumps.entries()) {
    expect(dump).toMatchObject({ isError: false, truncated: true });
    expect(dump.output.length).toBeLessThanOrEqual(8000);
    if (n >= 10 && n < 20) expect(dump.resultHandle).toBe('');
    const notKept = `the full text of this result (${sizes[n]} characters) could not be kept, so it cannot be read with ReadResult; only the part shown here is available`;
    expect(dump.warnings).toEqual(dump.resultHandle === '' ? [notKept] : []);
  }
  // Small writes (loop records, memory entries) take some more: before, the last bytes under
  // maxmemory, and Redis then refused the side-effecting call's completion, so that an identical
  // call found it still in progress.
  for (let turn = 0; turn < 10; turn++) {
    const calls = Array.from({ length: 100 }, (_, i) => ({ id: `n${i}`, name: 'note', arguments: JSON.stringify({ text: `${turn}-${i} `.padEnd(500, 'y') }) }));
    const { results } = await env.app.dispatch.dispatch({ sessionId: `notes-${turn}`, calls });
    expect(results.every((r) => !r.isError)).toBe(true);
  }

  const pay = () => env.app.dispatch.dispatch({ sessionId: 'payments', calls: [{ id: 'p', name: 'pay', arguments: '{"amount":5}' }] });
  expect((await pay()).results[0]).toMatchObject({ isError: false, output: 'paid', idempotentReplay: false });
  expect((await pay()).results[0]).toMatchObject({ isError: false, output: 'paid', idempotentReplay: true });
  expect(env.tools.count('/pay')).toBe(1);
});
