import { breakerStatsOf } from '../../src/guards';
import { startToolServer, type ToolServer } from '../helpers/servers';
import { errorJson, startGuardedApp, until } from './helpers';

// A call admitted while its tool's breaker was closed, still running when the breaker went
// half-open (timeout_ms longer than half_open_after_ms), is no probe: its answer neither frees the
// half-open slot for a second probe nor closes or re-opens the breaker in the probe's place.

const held = new Map<string, (status: number) => void>();
const yaml = (url: string) => `
tools:
  - { name: flaky, effect: read_only, timeout_ms: 10000, retry: { max_attempts: 1 }, input_schema: '{"type":"object"}', http: { url: "${url}/flaky" } }
policies:
  - match: flaky
    breaker: { consecutive_failures: 2, half_open_after_ms: 300 }
`;

describe('outcomes of calls admitted before the breaker opened', () => {
  let tools: ToolServer;
  let d: Awaited<ReturnType<typeof startGuardedApp>>;
  let n = 0;
  const call = (args: object) => d.dispatch.dispatch({ sessionId: `s${++n}`, calls: [{ id: `c${n}`, name: 'flaky', arguments: JSON.stringify({ n, ...args }) }] }).then((r) => r.results[0]!);
  const kind = (r: { isError: boolean; output: string }) => (r.isError ? errorJson(r.output).kind : 'OK');
  const states = () => d.events.filter((e) => e.kind === 'BREAKER_STATE').map((e) => e.detail);
  const release = (name: string, status: number) => held.get(name)!(status);

  /** Starts the long call `L` while closed, opens the breaker, and sends probe `P1` once it is half-open. */
  async function longCallOverProbe() {
    const long = call({ hold: 'L' });
    await until(() => held.has('L'));
    for (let i = 0; i < 2; i++) expect(kind(await call({ status: 500 }))).toBe('TOOL_ERROR');
    expect(kind(await call({}))).toBe('BREAKER_OPEN');
    await until(() => states().includes('half_open'));
    const probe = call({ hold: 'P1' });
    await until(() => held.has('P1'));
    expect(kind(await call({}))).toBe('BREAKER_OPEN');
    return { long, probe };
  }

  beforeEach(async () => {
    held.clear();
    tools = await startToolServer({
      '/flaky': async (req, res) => {
        const { hold, status } = req.body.arguments as { hold?: string; status?: number };
        const answer = hold ? await new Promise<number>((resolve) => held.set(hold, resolve)) : (status ?? 200);
        res.writeHead(answer).end(answer >= 400 ? 'broke' : 'fine');
      },
    });
    d = await startGuardedApp(yaml(tools.url));
  });
  afterEach(async () => {
    for (const resolve of held.values()) resolve(200);
    await d.close();
    await tools.close();
  });

  test('a 404 from a call admitted while closed does not let a second probe in beside the first', async () => {
    const { long, probe } = await longCallOverProbe();
    release('L', 404);
    expect(kind(await long)).toBe('TOOL_ERROR');
    expect(kind(await call({ second: true }))).toBe('BREAKER_OPEN');
    expect(tools.received.filter((r) => (r.body.arguments as { second?: boolean }).second)).toEqual([]);
    release('P1', 200);
    expect(kind(await probe)).toBe('OK');
    expect(states()).toEqual(['open', 'half_open', 'closed']);
    expect(tools.count('/flaky')).toBe(4);
  });

  test("a success from a call admitted while closed does not close the breaker: the probe's 503 opens it again", async () => {
    const { long, probe } = await longCallOverProbe();
    release('L', 200);
    expect(kind(await long)).toBe('OK');
    expect(breakerStatsOf(d.app.deps.guards)!.state('flaky')).toBe('half_open');
    expect(kind(await call({}))).toBe('BREAKER_OPEN');
    release('P1', 503);
    expect(kind(await probe)).toBe('TOOL_ERROR');
    expect(states()).toEqual(['open', 'half_open', 'open']);
    expect(tools.count('/flaky')).toBe(4);
  });
});
