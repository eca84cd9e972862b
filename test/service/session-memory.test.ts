import { createHash } from 'node:crypto';
import { status } from '@grpc/grpc-js';
import { dispatchctlAt } from '../helpers/dispatchctl';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp, type TestDispatch } from '../helpers/servers';

// An agent integrator's probe: trajectory memory (a line per call that succeeded, DESIGN section 3
// step 10) was written after every success, to the memory store and to Redis, and nothing could
// read it: no RPC, no command. GetSessionMemory reads it, for the caller's tenant, and
// `dispatchctl memory SESSION` prints it. Both stores.

jest.setTimeout(30_000);

const sha = (token: string) => createHash('sha256').update(token).digest('hex');
const ACME = { authorization: 'Bearer tok-acme' };
const GLOBEX = { authorization: 'Bearer tok-globex' };
const config = `
tools:
  - { name: look, effect: read_only, input_schema: '{"type":"object"}', builtin: { name: echo } }
  - { name: strict, effect: read_only, input_schema: '{"type":"object","required":["q"]}', builtin: { name: echo } }
auth: { tokens: [ { tenant: acme, sha256: "${sha('tok-acme')}", scopes: [dispatch] }, { tenant: globex, sha256: "${sha('tok-globex')}", scopes: [dispatch] } ] }
`;

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis?.close());

describe.each([
  ['the memory store', false],
  ['Redis', true],
])('with %s', (_store, withRedis) => {
  let d: TestDispatch;
  beforeAll(async () => {
    d = await startApp(config, withRedis ? { redisUrl: redis.url } : {});
  });
  afterAll(() => d?.close());

  const session = `s-${withRedis}`;
  const call = (id: string, name: string, args: string, metadata = ACME) => d.dispatch.dispatch({ sessionId: session, calls: [{ id, name, arguments: args }] }, { metadata });

  it("reads the session's memory, oldest first, a line per call that succeeded, secrets redacted; another tenant's is none; EndSession clears it", async () => {
    await call('c1', 'look', '{"q":"first"}');
    await call('c2', 'strict', '{}');
    await call('c3', 'look', '{"q":"second","password":"hunter2-hunter2"}');
    const { entries, omitted } = await d.dispatch.getSessionMemory({ sessionId: session }, { metadata: ACME });
    expect(omitted).toBe(0);
    expect(entries).toHaveLength(2);
    expect(entries[0]).toBe('tool=look; input={"q":"first"}; result={"q":"first"}');
    expect(entries[1]).toMatch(/^tool=look; input=\{.*"q":"second".*\}; result=/);
    expect(entries[1]).not.toContain('hunter2');
    expect((await d.dispatch.getSessionMemory({ sessionId: session }, { metadata: GLOBEX })).entries).toEqual([]);
    const shown = await dispatchctlAt(() => d.address)('--token', 'tok-acme', 'memory', session);
    expect(shown).toMatchObject({ code: 0, out: entries.join('\n') });
    await d.dispatch.endSession({ sessionId: session }, { metadata: ACME });
    expect((await d.dispatch.getSessionMemory({ sessionId: session }, { metadata: ACME })).entries).toEqual([]);
    const none = await dispatchctlAt(() => d.address)('--token', 'tok-acme', 'memory', session);
    expect(none).toMatchObject({ code: 0, out: '' });
    expect(none.err).toContain('has no memory');
  });

  it('refuses an empty session id INVALID_ARGUMENT, naming session_id', async () => {
    await expect(d.dispatch.getSessionMemory({ sessionId: '' }, { metadata: ACME })).rejects.toMatchObject({ code: status.INVALID_ARGUMENT, details: 'session_id is required' });
  });
});

test('keeps the newest entries that fit max_response_bytes, saying how many older ones it left out', async () => {
  const d = await startApp(`${config}limits: { max_response_bytes: 40000 }\n`);
  try {
    for (let i = 0; i < 40; i++) await d.dispatch.dispatch({ sessionId: 'big', calls: [{ id: `c${i}`, name: 'look', arguments: JSON.stringify({ i, pad: 'x'.repeat(2_000) }) }] }, { metadata: ACME });
    const { entries, omitted } = await d.dispatch.getSessionMemory({ sessionId: 'big' }, { metadata: ACME });
    expect(omitted).toBeGreaterThan(0);
    expect(entries.length + omitted).toBe(40);
    expect(entries.at(-1)).toContain('"i":39');
    expect(entries.reduce((n, e) => n + Buffer.byteLength(e), 0)).toBeLessThan(40_000);
  } finally {
    await d.close();
  }
});
