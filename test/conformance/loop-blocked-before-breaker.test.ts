import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { closedPort, startApp } from '../helpers/servers';

// DESIGN section 11: "The loop pre-check comes before the breaker gate, so LOOP_BLOCKED wins when
// both apply" (section 3: step 3 before step 4), for side-effecting tools as for read-only ones.
// A side-effecting call its open breaker let through for its idempotency record only was refused
// BREAKER_OPEN before its loop block was looked at.

const tool = (name: string, effect: string, url: string) => `
  - name: ${name}
    effect: ${effect}
    retry: { max_attempts: 1 }
    loop: { failure_block_threshold: 2, assumed_wait_ms: 600000 }
    input_schema: '{"type":"object"}'
    http: { url: "${url}" }`;

let d: Awaited<ReturnType<typeof startApp>>;
beforeAll(async () => {
  // Refused connections: failures before execution (no idempotency record) that count for the breaker.
  const url = `http://127.0.0.1:${await closedPort()}/x`;
  d = await startApp(`
tools:${tool('send', 'side_effect', url)}${tool('fetch', 'read_only', url)}
policies:
  - { match: [send, fetch], breaker: { consecutive_failures: 3 } }
`);
});
afterAll(() => d.close());

/** The kinds of `count` identical calls of `name` with `args`, one turn each. */
async function kinds(name: string, count: number, args = '{"to":"a"}'): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const { results } = await d.dispatch.dispatch({ sessionId: `s-${name}`, calls: [{ id: `c${i}`, name, arguments: args }] });
    out.push(ErrorKind[results[0]!.error!.kind]);
  }
  return out;
}

// The first refusal told the model to call again later (uncounted); the 2nd and 3rd count and
// block the call; the 3rd attempt in a row opens the breaker. The 4th call: both apply.
test.each(['send', 'fetch'])('%s: the call both its loop block and its open breaker refuse is LOOP_BLOCKED', async (name) => {
  expect(await kinds(name, 5)).toEqual(['UNAVAILABLE', 'UNAVAILABLE', 'UNAVAILABLE', 'LOOP_BLOCKED', 'LOOP_BLOCKED']);
  // The breaker is open: a call the loop window does not block is refused by it.
  expect(await kinds(name, 1, '{"to":"b"}')).toEqual(['BREAKER_OPEN']);
});
