// A client whose TLS handshakes are refused (the server's certificate names another host), once
// ended, leaves nothing that holds the process. ioredis ends a connection by ending its socket and
// arming a 2 s timer to destroy it, cleared by the socket's 'close': a socket the refused handshake
// had destroyed already closed before, so the timer ran its 2 s. A Cluster client asks a seed for
// its slots on a connection of its own that dispatch never sees (ioredis's "refresher"), refused
// the same way: the process could not exit for 2 s after the client ended (jest: "A worker process
// has failed to exit gracefully" after test/redis/redis-tls-names.test.ts); a Sentinel client's
// lookups go through connections to the Sentinels of their own, alike. Each case is a node
// process of its own (dist/), timed from the client's end to its exit; the server is a TLS
// listener on loopback, no Redis needed, as the handshake is refused before any command.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createServer, type Server } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { createTestPki, type TestPki } from '../security/support/certificates';

jest.setTimeout(30_000);

const DIST = resolve(__dirname, '../../dist/src');

/** Connects to the URL (argv), waits up to 0.4 s for ready (a refused handshake takes a few ms on loopback), ends the client, and prints whether it was ready and how long the process took to exit after. */
const CHILD = `
const { connectRedis, endUnconnected, whenReady } = require(${JSON.stringify(`${DIST}/store/redis`)});
const client = connectRedis(process.argv[1], { env: { DISPATCH_REDIS_TLS_CA: process.argv[2] } });
client.on('error', () => undefined);
(async () => {
  const ready = await whenReady(client, 400);
  await endUnconnected(client);
  client.disconnect();
  const ended = Date.now();
  process.on('exit', () => console.log(JSON.stringify({ ready, exitMs: Date.now() - ended })));
})();
`;

let pki: TestPki;
let server: Server;
let port: number;
beforeAll(async () => {
  pki = createTestPki('refused TLS CA');
  const other = pki.peer('other', 'DNS:redis.internal');
  server = createServer({ cert: readFileSync(other.cert), key: readFileSync(other.key) }, (socket) => socket.on('error', () => undefined));
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((done) => server?.close(done));
  pki?.remove();
});

function endThenExit(url: string): Promise<{ ready: boolean; exitMs: number }> {
  return new Promise((done, fail) => {
    execFile(process.execPath, ['-e', CHILD, url, pki.ca], { timeout: 20_000 }, (error, stdout, stderr) => {
      if (error) fail(new Error(`child failed: ${error.message}\n${stderr}`));
      else done(JSON.parse(stdout.trim().split('\n').pop()!) as { ready: boolean; exitMs: number });
    });
  });
}

test.each([
  ['a Cluster client (its slots asked on a connection of its own)', 'rediss-cluster://127.0.0.1:PORT'],
  ['a standalone client', 'rediss://127.0.0.1:PORT'],
  ['a Sentinel client (its lookups on connections to the Sentinels)', 'rediss-sentinel://127.0.0.1:PORT/mymaster'],
])('%s refused by certificate exits at once once ended, not 2 s later', async (_label, url) => {
  const { ready, exitMs } = await endThenExit(url.replace('PORT', String(port)));
  expect(ready).toBe(false);
  // Before: 2,000 ms (ioredis's disconnectTimeout) for the Cluster client.
  expect(exitMs).toBeLessThan(1_000);
});
