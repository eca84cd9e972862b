import { ErrorKind, type ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { failure } from '../contract/error-info';
import { useRedisApp } from '../helpers/redis-app';
import { json } from '../helpers/servers';

// docs/failures.md, Redis (the store) not answering (stopped, its port still open; the outage test
// kills it instead, which refuses at once): a side-effecting call fails closed within its attempts'
// store steps (store_timeout_ms, 1 s, each) and runs once Redis answers again (the claim Redis
// took after its try timed out is given back); a read-only call goes on. The RPCs the error table
// lists under STORE_UNAVAILABLE answer it within their waits, with their metadata and RetryInfo.

jest.setTimeout(60_000);

const paid = new Map<string, number>();
const env = useRedisApp({
  routes: {
    '/pay': (req, res) => {
      const ref = String((req.body.arguments as { ref: string }).ref);
      paid.set(ref, (paid.get(ref) ?? 0) + 1);
      res.writeHead(200).end(`paid ${ref}`);
    },
    '/look': json({ balance: 10 }),
  },
  config: (url) => `tools:
  - { name: pay, effect: side_effect, http: { url: "${url}/pay" } }
  - { name: look, effect: read_only, http: { url: "${url}/look" } }
`,
});

const call = async (name: string, args: unknown, id = 'c1'): Promise<ToolResult> => (await env.app.dispatch.dispatch({ sessionId: 's', calls: [{ id, name, arguments: JSON.stringify(args) }] })).results[0]!;
const timed = async <T>(run: () => Promise<T>): Promise<[T, number]> => {
  const started = Date.now();
  const value = await run();
  return [value, Date.now() - started];
};

/** Runs `body` with Redis stopped (SIGSTOP), resuming it after. */
async function whileStopped(body: () => Promise<void>): Promise<void> {
  env.redis.signal('SIGSTOP');
  try {
    await body();
  } finally {
    env.redis.signal('SIGCONT');
  }
}

test('a side-effecting call fails closed within its store steps, reads go on, and the same call runs once Redis answers', async () => {
  expect((await call('pay', { ref: 'warm' })).isError).toBe(false);
  await whileStopped(async () => {
    const [side, sideMs] = await timed(() => call('pay', { ref: 'stopped' }));
    expect(side.error).toMatchObject({ kind: ErrorKind.STORE_UNAVAILABLE, recoverable: true });
    expect(side.attempts).toBe(2);
    // Two attempts of one 1 s store step each, and the backoff between them.
    expect(sideMs).toBeGreaterThanOrEqual(2_000);
    expect(sideMs).toBeLessThan(3_500);
    const [read, readMs] = await timed(() => call('look', { q: 1 }));
    expect(read).toMatchObject({ isError: false, output: '{"balance":10}' });
    expect(readMs).toBeLessThan(2_000);
  });
  expect(paid.get('stopped')).toBeUndefined();
  // The claims Redis takes once it resumes were given up: they are released after it, not left IN_PROGRESS.
  await new Promise((r) => setTimeout(r, 300));
  expect(await call('pay', { ref: 'stopped' })).toMatchObject({ isError: false, idempotentReplay: false, output: 'paid stopped' });
  expect(paid.get('stopped')).toBe(1);
});

test('RemoveTool, ListApprovals and ResolveApproval answer STORE_UNAVAILABLE within their waits', async () => {
  await env.app.registry.registerTools({ tools: [{ name: 'shared', inputSchema: '{"type":"object"}', executor: { case: 'http', value: { url: 'http://127.0.0.1:8/x' } } }] });
  const options = { deadlineMs: 15_000 };
  await whileStopped(async () => {
    const [removed, removeMs] = await timed(() => failure(env.app.registry.removeTool({ name: 'shared' }, options)));
    expect(removed).toMatchObject({ reason: 'STORE_UNAVAILABLE', metadata: { tool: 'shared' }, retryDelayMs: 1_000 });
    expect(removeMs).toBeLessThan(1_500);
    const [listed, listMs] = await timed(() => failure(env.app.dispatch.listApprovals({ sessionId: 'sx' }, options)));
    expect(listed).toMatchObject({ reason: 'STORE_UNAVAILABLE', metadata: { session_id: 'sx' }, retryDelayMs: 1_000 });
    expect(listMs).toBeLessThan(2_500);
    const approvalId = '7f0c4b9e-8d2c-4e43-9b1a-0d2b3c4d5e6f';
    const [resolved, resolveMs] = await timed(() => failure(env.app.dispatch.resolveApproval({ approvalId, approve: true }, options)));
    expect(resolved).toMatchObject({ reason: 'STORE_UNAVAILABLE', metadata: { approval_id: approvalId }, retryDelayMs: 1_000 });
    // Three waits of 2 s: the approval's owner looked up, its confirmation, the decision voided.
    expect(resolveMs).toBeGreaterThanOrEqual(5_500);
    expect(resolveMs).toBeLessThan(7_000);
  });
});
