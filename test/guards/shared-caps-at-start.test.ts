import { createServer, connect, type Server, type Socket } from 'node:net';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { json, startApp, startToolServer, type ToolServer } from '../helpers/servers';
import { callOn, type Replica } from './replica-pair';
import { plainTool } from './two-tenants';

// A shared cap counts in Redis from the first call an app serves. Its connection to Redis (the
// `slots` one, made by the guards plugin after the store's) was not waited for: a call made as
// soon as the app served, before that connection was ready, fell back to this replica's own cap,
// as while Redis fails (seen as a flaky test: two replicas each let their own cap's calls run).
// Start-up now waits for it (up to 1 s). Here a proxy before Redis holds that connection's first
// bytes for 800 ms, so that it is ready well after the store's.

jest.setTimeout(30_000);

const HOLD_MS = 800;

/** A loopback proxy to `port` that holds what a client sends for HOLD_MS once it names itself `dispatch:slots`. */
async function holdingProxy(port: number): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(port, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    let held: Buffer[] | undefined;
    client.on('data', (chunk: Buffer) => {
      if (held) return void held.push(chunk);
      if (!chunk.includes('dispatch:slots')) return void upstream.write(chunk);
      held = [chunk];
      setTimeout(() => {
        for (const c of held!) upstream.write(c);
        held = undefined;
      }, HOLD_MS);
    });
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

let redis: TestRedis;
let proxy: Awaited<ReturnType<typeof holdingProxy>>;
let tools: ToolServer;
let app: Replica | undefined;
beforeAll(async () => {
  redis = await startRedis({ own: true });
  proxy = await holdingProxy(redis.port);
  tools = await startToolServer({ '/capped': json({ ok: true }, 400) });
});
afterAll(async () => {
  await app?.close();
  await tools?.close();
  await proxy?.close();
  await redis?.close();
});

test('the first calls an app serves are counted in Redis: its start waited for the shared caps connection', async () => {
  const yaml = `tools:\n${plainTool(tools.url, 'capped')}policies:\n  - match: capped\n    concurrency: { max_in_flight: 1, shared: true }\n`;
  const started = Date.now();
  app = await startApp(yaml, { redisUrl: `redis://127.0.0.1:${proxy.port}` });
  // The slots connection was held HOLD_MS: start-up waited that long for it, and no longer than its bound.
  expect(Date.now() - started).toBeGreaterThanOrEqual(HOLD_MS - 50);
  // Ready: its last command was its ready check (INFO), not an ACL probe of its own (the store's
  // connection, same user, has had it: one probe, one warning a refusal, not two).
  const slots = redis.cli('CLIENT', 'LIST').split('\n').find((line) => line.includes(' name=dispatch:slots '));
  expect(slots).toContain(' cmd=info ');
  const [first, second] = await Promise.all([callOn(app, 'capped'), callOn(app, 'capped')]);
  expect([first!.isError, second!.isError].sort()).toEqual([false, true]);
  expect([first, second].find((r) => r!.isError)!.error?.message).toBe('tool "capped" is at its limit of 1 call running at once on all dispatch replicas together; this call was not executed');
});
