// A call to a Streamable HTTP MCP server whose POST needs a new connection, and whose connect
// hangs (the server's host gone silent), never reached the server: it fails as not executed and a
// side-effecting call's claim is given back, as an HTTP tool's (test/service/unsent-requests).
// Before, the call was taken as sent once handed to the SDK: the tool's timeout made it
// "may or may not have taken effect", and the same call was refused OUTCOME_UNKNOWN for its
// record's TTL (an hour), though the server never saw it.
import { create } from '@bufbuild/protobuf';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { RetryPolicySchema } from '../../gen/dispatch/v1/tool_pb';
import { SentHooks } from '../../src/executors/mcp/mcp-sent-hooks';
import { startBlackhole, type Blackhole } from '../helpers/blackhole';
import { startApp } from '../helpers/servers';
import { eventually } from '../workers/worker-harness';
import { freePort, startHttpMcp, type HttpMcp } from './mcp-harness';

jest.setTimeout(30_000);

type AppT = Awaited<ReturnType<typeof startApp>>;

/** A proxy on `port` to the MCP server; `hang` makes every new connection to `port` hang, `restore` forwards again. */
async function startGate(port: number, upstream: number) {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let hole: Blackhole | undefined;
  const listen = async () => {
    server = createServer((client) => {
      const up = connect(upstream, '127.0.0.1');
      for (const s of [client, up]) {
        sockets.add(s);
        s.on('close', () => sockets.delete(s)).on('error', () => undefined);
      }
      client.pipe(up).pipe(client);
    });
    await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
  };
  await listen();
  return {
    async hang() {
      const closed = new Promise((resolve) => server!.close(resolve));
      for (const s of sockets) s.destroy();
      await closed;
      hole = await startBlackhole(port);
    },
    async restore() {
      await hole?.close();
      hole = undefined;
      await listen();
    },
    async close() {
      await hole?.close();
      for (const s of sockets) s.destroy();
      server?.close();
    },
  };
}

let mcp: HttpMcp;
let gate: Awaited<ReturnType<typeof startGate>>;
let t: AppT;
beforeAll(async () => {
  mcp = await startHttpMcp();
  const port = await freePort();
  gate = await startGate(port, mcp.port);
  t = await startApp(`mcp_servers:\n  - { name: web, url: "http://127.0.0.1:${port}/mcp", prefix: "web.", reconnect_initial_ms: 100, reconnect_max_ms: 400, ping_timeout_ms: 500 }\n`);
  // web.write, side-effecting, never retried, with a tool timeout of 800 ms.
  const spec = t.app.deps.registry.lookup('', 'web.write')!.spec;
  t.app.deps.registry.register([{ ...spec, name: 'w', timeoutMs: 800, retry: create(RetryPolicySchema, { maxAttempts: 1 }) }], { tenant: '' });
});
afterAll(async () => {
  await t.close();
  await gate.close();
  await mcp.kill();
  // The connects that hung (the call's POST, the liveness ping, the GET stream's reopening) ended
  // with the app's close: each client's transport ends its own Agent's (mcp-http-close-ends-connects).
});

const run = (name: string, args: string, id: string) => t.dispatch.dispatch({ sessionId: 's', calls: [{ id, name, arguments: args }] }).then((r) => r.results[0]!);

test('a call whose connect hangs until its timeout sent nothing: UNAVAILABLE before, and the same call runs once the server is reachable', async () => {
  expect((await run('w', '{"text":"warm"}', 'c0')).error).toBeUndefined();
  await gate.hang();
  const first = await run('w', '{"text":"pay"}', 'c1');
  expect(first.error?.kind).toBe(ErrorKind.UNAVAILABLE);
  expect(first.error?.message).toBe('could not reach the tool within 800 ms; nothing was sent to it');
  expect(first.error?.recoverable).toBe(true);
  await gate.restore();
  // Reachable again: a read-only call answers (the connection may be made anew meanwhile).
  await eventually(async () => (await run('web.echo', '{"text":"back"}', `e${Date.now()}`)).error === undefined, 20_000, 'the server reachable again');
  const again = await run('w', '{"text":"pay"}', 'c2');
  expect(again.error).toBeUndefined();
  expect(again.idempotentReplay).toBe(false);
  expect(JSON.parse(again.output)).toMatchObject({ text: 'pay' });
});

test('SentHooks: the hook armed goes with the one request sent meanwhile, once, is told at once when none was sent, and is forgotten once its send settles', async () => {
  const hooks = new SentHooks();
  const sends: ((ok: boolean) => void)[] = [];
  const transport = { send: () => new Promise<void>((resolve, reject) => sends.push((ok) => (ok ? resolve() : reject(new Error('refused'))))) } as unknown as Parameters<SentHooks['wrap']>[0];
  hooks.wrap(transport);
  const told: string[] = [];
  void transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  hooks.arm(() => told.push('a'), () => {
    void transport.send({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: {} });
    void transport.send({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: {} });
  });
  expect(hooks.size()).toBe(1);
  expect(hooks.take(8)).toBeUndefined();
  hooks.take(7)!();
  expect(told).toEqual(['a']);
  expect(hooks.take(7)).toBeUndefined();
  // Nothing sent while armed (an SDK sending later): taken as sent at once, as before SentHooks.
  hooks.arm(() => told.push('none sent'), () => Promise.resolve());
  expect(told).toEqual(['a', 'none sent']);
  hooks.arm(() => told.push('b'), () => void transport.send({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: {} }).catch(() => undefined));
  expect(hooks.size()).toBe(1);
  sends[3]!(false);
  await eventually(() => hooks.size() === 0, 1_000, 'the hook forgotten');
});
