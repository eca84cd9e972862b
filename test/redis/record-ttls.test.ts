import { randomUUID } from 'node:crypto';
import { DEFAULT_TENANT } from '../../src/server';
import { sessionKeys } from '../../src/store/redis/session-keys';
import { useRedisApp } from '../helpers/redis-app';

// The TTLs a tool's config gives reach Redis: the idempotency record of a side-effecting call
// lives for the tool's `idempotency.ttl_seconds` (3,600 s when unset), and so does a result
// spilled for ReadResult; the session's memory and window live a day from their last write.

jest.setTimeout(60_000);

const RUN = randomUUID().slice(0, 8);

const env = useRedisApp({
  redis: {},
  routes: {
    '/send': (_req, res) => void res.writeHead(200).end('sent'),
    '/long': (_req, res) => void res.writeHead(200).end('x'.repeat(500)),
  },
  config: (url) => `tools:
  - name: send
    effect: side_effect
    http: { url: "${url}/send" }
  - name: send_brief
    effect: side_effect
    idempotency: { ttl_seconds: 120 }
    http: { url: "${url}/send" }
  - name: report
    effect: side_effect
    idempotency: { ttl_seconds: 600 }
    max_result_chars: 100
    http: { url: "${url}/long" }
`,
});

/** The remaining TTL, in seconds, of every key of `sessionId` whose name contains `part`. */
function ttlsOf(sessionId: string, part: string): number[] {
  const keys = sessionKeys({ tenant: DEFAULT_TENANT, sessionId });
  const pattern = `${keys.window.slice(0, -'window'.length)}${part}*`;
  const names = env.redis.cli('--scan', '--pattern', pattern).split('\n').filter(Boolean);
  return names.map((name) => Number(env.redis.cli('TTL', name).trim()));
}

test.each([
  ['send', 3600],
  ['send_brief', 120],
])('the idempotency record of a %s call lives for its tool’s TTL (%i s)', async (tool, ttl) => {
  const sessionId = `ttl-${RUN}-${tool}`;
  const { results } = await env.app.dispatch.dispatch({ sessionId, calls: [{ id: 'c1', name: tool, arguments: '{"to":"a"}' }] });
  expect(results[0]).toMatchObject({ isError: false, output: 'sent' });
  const ttls = ttlsOf(sessionId, 'idem:');
  expect(ttls).toHaveLength(1);
  expect(ttls[0]).toBeGreaterThan(ttl - 30);
  expect(ttls[0]).toBeLessThanOrEqual(ttl);
  // The session's memory lives a day from its last write.
  const [memory] = ttlsOf(sessionId, 'memory');
  expect(memory).toBeGreaterThan(86_400 - 30);
});

test('a result spilled for ReadResult lives for its tool’s TTL, and so does its record', async () => {
  const sessionId = `ttl-${RUN}-spill`;
  const { results } = await env.app.dispatch.dispatch({ sessionId, calls: [{ id: 'c1', name: 'report', arguments: '{}' }] });
  expect(results[0]).toMatchObject({ isError: false, truncated: true });
  expect(results[0]!.resultHandle).not.toBe('');
  for (const part of ['result:', 'idem:']) {
    const ttls = ttlsOf(sessionId, part);
    expect(ttls).toHaveLength(1);
    expect(ttls[0]).toBeGreaterThan(600 - 30);
    expect(ttls[0]).toBeLessThanOrEqual(600);
  }
});
