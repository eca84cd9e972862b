import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import type * as grpc from '@grpc/grpc-js';
import { buildApp, createPipeline, PLUGINS, type App, type PipelineOptions, type PluginFactory } from '../../src/app';
import { createDispatchClient, createRegistryClient } from '../../src/client';
import { parseConfig } from '../../src/config';
import { SILENT_LOGGER } from '../../src/log';
import { startServer, type DispatchServer, type ServerOptions } from '../../src/server';

/** A request an HTTP tool server received. */
export interface ReceivedRequest {
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: Record<string, unknown>;
  readonly start: number;
  end?: number;
}

/** A real HTTP tool server on loopback that records and counts what it receives. */
export interface ToolServer {
  readonly url: string;
  readonly received: ReceivedRequest[];
  count(path?: string): number;
  close(): Promise<void>;
}

export type ToolRoute = (request: ReceivedRequest, response: ServerResponse) => void | Promise<void>;

/** Starts an HTTP tool server on 127.0.0.1:0 whose routes answer by path. */
export async function startToolServer(routes: Record<string, ToolRoute>): Promise<ToolServer> {
  const received: ReceivedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString() || '{}') as Record<string, unknown>;
      } catch {
        body = {};
      }
      const entry: ReceivedRequest = { path: req.url ?? '/', headers: req.headers, body, start: Date.now() };
      received.push(entry);
      res.on('finish', () => (entry.end = Date.now()));
      res.on('close', () => (entry.end ??= Date.now()));
      const route = routes[entry.path];
      if (!route) {
        res.writeHead(404).end('no such route');
        return;
      }
      Promise.resolve(route(entry, res)).catch(() => res.destroy());
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    count: (path) => received.filter((r) => path === undefined || r.path === path).length,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The most requests a tool server had open at once (a request not yet ended counts as open). */
export function maxInFlight(requests: readonly ReceivedRequest[]): number {
  const edges = requests.flatMap((r) => [[r.start, 1] as const, [r.end ?? Infinity, -1] as const]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let max = 0;
  for (const [, delta] of edges) max = Math.max(max, (now += delta));
  return max;
}

/** Replies with JSON after an optional delay. */
export const json = (value: unknown, delayMs = 0, status = 200): ToolRoute => async (_req, res) => {
  if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs).unref());
  if (!res.destroyed) res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
};

/** A dispatch server on 127.0.0.1:0 with its clients. */
export interface TestDispatch {
  readonly server: DispatchServer;
  readonly address: string;
  readonly dispatch: ReturnType<typeof createDispatchClient>;
  readonly registry: ReturnType<typeof createRegistryClient>;
  close(): Promise<void>;
}

/** Clients of a server at `address` and a `close` that closes them, then runs `stop`. */
function withClients(address: string, stop: () => Promise<void>, credentials?: grpc.ChannelCredentials) {
  const dispatch = createDispatchClient(address, credentials);
  const registry = createRegistryClient(address, credentials);
  return {
    address,
    dispatch,
    registry,
    async close() {
      dispatch.close();
      registry.close();
      await stop();
    },
  };
}

/** Starts dispatch with tools from YAML text; closes clients and server on `close`. */
export async function startDispatch(toolsYaml: string, options: PipelineOptions = {}, serverOptions: Omit<ServerOptions, 'deps'> = {}): Promise<TestDispatch> {
  const config = parseConfig(toolsYaml, 'test.yaml');
  const deps = createPipeline({ logger: SILENT_LOGGER, ...options, config });
  const server = await startServer('127.0.0.1:0', { ...serverOptions, deps });
  return {
    server,
    ...withClients(`127.0.0.1:${server.port}`, async () => {
      await server.shutdown(500);
      await deps.store.close();
      await deps.scratch.close();
    }),
  };
}

/**
 * Serves a built app on `address` (127.0.0.1:0 unless given) with its clients (over `credentials`
 * when given, to `localhost` so a test certificate's name matches).
 */
export async function serveApp(app: App, credentials?: grpc.ChannelCredentials, address = '127.0.0.1:0'): Promise<TestDispatch & { app: App }> {
  const server = await app.listen(address);
  return { app, server, ...withClients(`${credentials ? 'localhost' : '127.0.0.1'}:${server.port}`, () => app.close(500), credentials) };
}

/** A full dispatch app (every plugin, or the given `factories`) on 127.0.0.1:0 with its clients. */
export async function startApp(toolsYaml: string, options: Parameters<typeof buildApp>[1] = {}, factories: readonly PluginFactory[] = PLUGINS): Promise<TestDispatch & { app: App }> {
  return serveApp(await buildApp(parseConfig(toolsYaml, 'test.yaml'), { logger: SILENT_LOGGER, ...options }, factories));
}

/**
 * A loopback port nothing listens on. It is drawn below the kernel's ephemeral range (32768-60999
 * here), checked free by binding it, then released: a port from `listen(0)` went back to that range,
 * where another test's server could take it or a connection to it could get it as its own source
 * port and connect to itself, and a "refused" tool then answered (seen once in CI: retries).
 */
export async function closedPort(): Promise<number> {
  for (let tries = 0; ; tries++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const probe = createNetServer();
    const bound = await new Promise<boolean>((resolve) => {
      probe.once('error', () => resolve(false));
      probe.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (bound) {
      await new Promise<void>((resolve) => probe.close(() => resolve()));
      return port;
    }
    if (tries >= 100) throw new Error('closedPort: no free loopback port below 32000 after 100 tries');
  }
}
