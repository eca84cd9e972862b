import { getEventListeners } from 'node:events';
import { createServer, type Server } from 'node:http';
import { createRequestScopedFetch, openLinks } from '../../src/executors/mcp';

/** /json answers a small JSON body, /stream a body that stays open until the client goes, /missing a 404. */
function startServer(): Promise<{ server: Server; url: (path: string) => string }> {
  const server = createServer((req, res) => {
    if (req.url === '/json') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    if (req.url === '/stream') return void res.writeHead(200, { 'content-type': 'text/event-stream' }).write('data: first\n\n');
    res.writeHead(404, { 'content-type': 'text/plain' }).end('no such path');
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, url: (path) => `http://127.0.0.1:${(server.address() as { port: number }).port}${path}` })),
  );
}

const abortListeners = (signal: AbortSignal) => getEventListeners(signal, 'abort').length;

describe('createRequestScopedFetch', () => {
  let server: Server;
  let url: (path: string) => string;
  const scoped = createRequestScopedFetch();
  beforeAll(async () => ({ server, url } = await startServer()));
  afterAll(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));

  it('holds one listener on the shared signal however many bodies were read, cancelled or were errors', async () => {
    const shared = new AbortController();
    // 100 rounds: a listener (or a link) left per body would show as 100 or more, past Node's
    // MaxListenersExceededWarning at 10.
    for (let i = 0; i < 100; i++) {
      const [json, missing, stream] = await Promise.all(['/json', '/missing', '/stream'].map((path) => scoped(url(path), { signal: shared.signal })));
      expect(await json!.json()).toEqual({ ok: true });
      expect(missing!.status).toBe(404);
      expect(await missing!.text()).toBe('no such path');
      await stream!.body!.cancel();
    }
    expect(abortListeners(shared.signal)).toBe(1);
    expect(openLinks(shared.signal)).toBe(0);
  });

  it('holds one listener on the shared signal for 50 streams open at once', async () => {
    const shared = new AbortController();
    const streams = await Promise.all(Array.from({ length: 50 }, () => scoped(url('/stream'), { signal: shared.signal })));
    expect(abortListeners(shared.signal)).toBe(1);
    expect(openLinks(shared.signal)).toBe(50);
    await Promise.all(streams.map((response) => response.body!.cancel()));
    expect(openLinks(shared.signal)).toBe(0);
  });

  it('keeps one listener while a body is being read, and aborting the shared signal ends the read', async () => {
    const shared = new AbortController();
    const response = await scoped(url('/stream'), { signal: shared.signal });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    expect((await reader.read()).value).toBe('data: first\n\n');
    expect(abortListeners(shared.signal)).toBe(1);
    expect(openLinks(shared.signal)).toBe(1);
    shared.abort(new Error('the transport closed'));
    await expect(reader.read()).rejects.toThrow();
    expect(abortListeners(shared.signal)).toBe(0);
    expect(openLinks(shared.signal)).toBe(0);
  });

  it('rejects at once with a shared signal already aborted', async () => {
    const shared = new AbortController();
    shared.abort(new Error('closed before the request'));
    await expect(scoped(url('/json'), { signal: shared.signal })).rejects.toThrow('closed before the request');
    expect(abortListeners(shared.signal)).toBe(0);
  });
});
