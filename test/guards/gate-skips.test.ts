import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startToolServer, type ToolServer } from '../helpers/servers';
import { errorJson, startGuardedApp } from './helpers';

// Rate limits and concurrency caps count the attempts that reach the API: a read the memo cache
// answers, and a side-effecting call its open breaker refuses, take no rate turn and no slot (they
// neither wait for one nor are refused for want of one). Real HTTP tools, through gRPC.

jest.setTimeout(30_000);

let tools: ToolServer;
let d: Awaited<ReturnType<typeof startGuardedApp>>;
/** While set, /slow holds its answers until it settles. */
let gate: Promise<void> | undefined;

beforeAll(async () => {
  tools = await startToolServer({
    '/search': (_req, res) => void res.writeHead(200).end('results'),
    '/slow': async (req, res) => {
      await gate;
      res.writeHead(200).end(`slow ${JSON.stringify(req.body.arguments)}`);
    },
    '/send': (_req, res) => void res.writeHead(500).end('down'),
  });
  d = await startGuardedApp(`
tools:
  - name: search
    effect: read_only
    retry: { max_attempts: 1 }
    input_schema: '{"type":"object","properties":{"q":{"type":"string"}}}'
    http: { url: "${tools.url}/search" }
  - name: slow
    effect: read_only
    retry: { max_attempts: 1 }
    input_schema: '{"type":"object","properties":{"q":{"type":"string"}}}'
    http: { url: "${tools.url}/slow" }
  - name: send
    effect: side_effect
    retry: { max_attempts: 1 }
    input_schema: '{"type":"object","properties":{"to":{"type":"string"}}}'
    http: { url: "${tools.url}/send" }
policies:
  - match: [search, send]
    rate: { per_second: 0.1 }
  - match: slow
    concurrency: { max_in_flight: 1 }
  - match: send
    breaker: { consecutive_failures: 1, half_open_after_ms: 60000 }
`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

const call = (name: string, args: object, sessionId = 's') => d.dispatch.dispatch({ sessionId, calls: [{ id: 'c', name, arguments: JSON.stringify(args) }] }).then((r) => r.results[0]!);

test('a memoized read is served at once past the rate limit; another read is still refused', async () => {
  expect((await call('search', { q: 'x' })).isError).toBe(false);
  const started = Date.now();
  const again = await call('search', { q: 'x' });
  expect(Date.now() - started).toBeLessThan(1000);
  expect(again).toMatchObject({ isError: false, output: 'results', cached: true });
  const other = await call('search', { q: 'y' });
  expect(errorJson(other.output)).toMatchObject({ kind: 'UNAVAILABLE' });
  expect(errorJson(other.output).message).toContain('is at its rate limit of 0.1 calls per second');
  expect(tools.count('/search')).toBe(1);
});

test('a memoized read is served while every slot of its tool is taken', async () => {
  expect((await call('slow', { q: 'a' })).output).toBe('slow {"q":"a"}');
  let open!: () => void;
  gate = new Promise((resolve) => (open = resolve));
  try {
    const holding = call('slow', { q: 'b' });
    for (let i = 0; i < 100 && tools.count('/slow') < 2; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await call('slow', { q: 'a' })).toMatchObject({ isError: false, output: 'slow {"q":"a"}', cached: true });
    const refused = await call('slow', { q: 'c' });
    expect(errorJson(refused.output)).toMatchObject({ kind: 'UNAVAILABLE' });
    open();
    expect((await holding).isError).toBe(false);
  } finally {
    open();
    gate = undefined;
  }
  expect(tools.count('/slow')).toBe(2);
});

test('a side-effecting call its open breaker refuses is refused BREAKER_OPEN, not held to the rate limit', async () => {
  expect((await call('send', { to: 'a' })).error?.kind).toBe(ErrorKind.TOOL_ERROR);
  const refused = await call('send', { to: 'b' });
  expect(refused.error?.kind).toBe(ErrorKind.BREAKER_OPEN);
  expect(tools.count('/send')).toBe(1);
});
