import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SILENT_LOGGER, type Logger } from '../../src/log';
import { startDaemon } from '../helpers/daemon';
import { dispatchctlAt } from '../helpers/dispatchctl';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp, startToolServer, type ToolServer } from '../helpers/servers';

// An on-call SRE's probe: `dispatchctl stats` dropped the server's warning that its counts covered
// one replica only (Redis away) and said "1 calls"; `read` past a result's end printed nothing and
// exited 0; an empty config file was served without a warning; a breaker opening was logged at
// info, with a tenant's tool named `tenant/name`. Real servers, a real redis-server.

let redis: TestRedis;
let d: Awaited<ReturnType<typeof startApp>>;
beforeAll(async () => {
  redis = await startRedis({ own: true });
  d = await startApp(`tools:\n  - { name: echo, effect: read_only, builtin: { name: echo } }\n  - { name: big, effect: read_only, max_result_chars: 100, builtin: { name: echo } }\n`, { redisUrl: redis.url });
});
afterAll(async () => {
  await d?.close();
  await redis?.close();
});

const ctl = dispatchctlAt(() => d.address);

test("read past a result's end says so and exits 2 (it printed nothing, exit 0)", async () => {
  const called = await d.dispatch.dispatch({ sessionId: 'r', calls: [{ id: 'c', name: 'big', arguments: JSON.stringify({ text: 'x'.repeat(500) }) }] });
  const handle = called.results[0]!.resultHandle;
  expect(handle).not.toBe('');
  const past = await ctl('read', handle, '99999999');
  expect(past.code).toBe(2);
  expect(past.err).toContain("OFFSET 99999999 is past the result's end: it holds");
  const within = await ctl('read', handle, '5');
  expect(within.code).toBe(0);
});

test('ReadResult of an empty handle is the caller\'s mistake: INVALID_ARGUMENT (it was NOT_FOUND, "it may have expired")', async () => {
  await expect(d.dispatch.readResult({ resultHandle: '' })).rejects.toMatchObject({ code: 3, details: expect.stringContaining('result_handle is empty') });
});

// After the read: this stops the Redis.
test('stats says "1 call", and says once, first, that Redis is away and the counts are this replica\'s', async () => {
  expect((await ctl('call', 'echo', '{"a":1}')).code).toBe(0);
  const up = await ctl('stats', 'echo');
  expect(up.out).toMatch(/^echo\s+1 call\s+breaker closed/);
  expect(up.out).not.toContain('WARNING');
  await redis.stop('SIGKILL');
  const away = await ctl('stats');
  expect(away.code).toBe(0);
  expect(away.out.split('\n')[0]).toMatch(/^WARNING redis is unreachable/);
  expect(away.out.match(/WARNING/g)).toHaveLength(1);
});

test('dispatchd warns when it has no tools to serve', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'empty-config-'));
  const file = join(dir, 'tools.yaml');
  writeFileSync(file, '# nothing yet\n');
  const daemon = await startDaemon(['--config', file]);
  try {
    await new Promise((r) => setTimeout(r, 100));
    expect(daemon.stderr()).toMatch(/"level":"warn".*"message":"no tools to serve yet/);
  } finally {
    daemon.child.kill('SIGTERM');
    await daemon.exited;
  }
});

describe('breaker log lines', () => {
  let tools: ToolServer;
  const lines: string[] = [];
  const logger: Logger = { ...SILENT_LOGGER, info: (m, f) => void lines.push(`info ${m} ${JSON.stringify(f)}`), warn: (m, f) => void lines.push(`warn ${m} ${JSON.stringify(f)}`) };
  let app: Awaited<ReturnType<typeof startApp>>;
  beforeAll(async () => {
    tools = await startToolServer({ '/down': (_req, res) => void res.writeHead(500).end('down') });
    app = await startApp(`tools:\n  - { name: flaky, effect: read_only, retry: { max_attempts: 1 }, http: { url: "${tools.url}/down" } }\npolicies:\n  - { match: flaky, breaker: { consecutive_failures: 2 } }\n`, { logger });
  });
  afterAll(async () => {
    await app?.close();
    await tools?.close();
  });

  test('an opening is a warn line naming the tool', async () => {
    for (const id of ['a', 'b']) await app.dispatch.dispatch({ sessionId: 'b', calls: [{ id, name: 'flaky', arguments: '{"q":1}' }] });
    expect(lines).toContain('warn breaker state changed {"tool":"flaky","state":"open"}');
  });
});
