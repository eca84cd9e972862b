import { useRedisApp } from '../helpers/redis-app';

// A replayed result kept the original's output and flags but dropped its warnings: a
// side-effecting call whose full text Redis could not keep warned so, and its replay said
// nothing (truncated, no handle, no warning why). The record keeps the warnings now.

jest.setTimeout(60_000);

let runs = 0;
const env = useRedisApp({
  routes: {
    '/send': (_req, res) => {
      runs++;
      res.writeHead(200).end('z'.repeat(20_000));
    },
  },
  config: (url) => `redis: { max_spill_bytes: 10000 }
tools:
  - name: send
    effect: side_effect
    http: { url: "${url}/send" }
`,
});

test("a replay carries the warnings of the result it replays: here that its full text could not be kept", async () => {
  const call = (id: string) => env.app.dispatch.dispatch({ sessionId: 'w', calls: [{ id, name: 'send', arguments: '{"to":"x"}' }] }).then((r) => r.results[0]!);
  const first = await call('c1');
  const notKept = 'the full text of this result (20000 characters) could not be kept, so it cannot be read with ReadResult; only the part shown here is available';
  expect(first).toMatchObject({ truncated: true, resultHandle: '', idempotentReplay: false, warnings: [notKept] });
  const replay = await call('c2');
  expect(replay).toMatchObject({ output: first.output, truncated: true, resultHandle: '', idempotentReplay: true, warnings: [notKept] });
  expect(runs).toBe(1);
});
