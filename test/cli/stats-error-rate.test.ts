import { dispatchctlAt } from '../helpers/dispatchctl';
import { startApp, startToolServer, type ToolServer } from '../helpers/servers';

// An on-call SRE's probe: a tool answering 403 to every call read healthy in `dispatchctl stats`
// (every one of the six rates 0%, no alert), as a 4xx is neither retried, timed out nor counted by
// the breaker. GetToolStats now has the error rate (calls that ended in an error of any kind),
// with an alert past half the calls. Real HTTP tool server, real gRPC, the real dispatchctl.

let tools: ToolServer;
let d: Awaited<ReturnType<typeof startApp>>;
beforeAll(async () => {
  tools = await startToolServer({
    '/forbidden': (_req, res) => void res.writeHead(403).end('forbidden: the token lacks the scope'),
    '/ok': (_req, res) => void res.writeHead(200).end('{"ok":true}'),
  });
  const tool = (name: string, path: string) => `  - { name: ${name}, effect: read_only, http: { url: "${tools.url}${path}" } }\n`;
  d = await startApp(`tools:\n${tool('denied', '/forbidden')}${tool('fine', '/ok')}`);
});
afterAll(async () => {
  await d?.close();
  await tools?.close();
});

const ctl = dispatchctlAt(() => d.address);
const call = (name: string, i: number) => d.dispatch.dispatch({ sessionId: 's', calls: [{ id: `c${i}`, name, arguments: JSON.stringify({ i }) }] });

test('a tool refusing every call shows an error rate of 100% and an alert; the six rates stay 0', async () => {
  for (let i = 0; i < 4; i++) {
    expect((await call('denied', i)).results[0]!.isError).toBe(true);
    expect((await call('fine', i)).results[0]!.isError).toBe(false);
  }
  const [denied] = (await d.registry.getToolStats({ tool: 'denied' })).stats;
  expect(denied!.rates).toMatchObject({ validationFailure: 0, timeout: 0, retry: 0, idempotentHit: 0, resultBounding: 0, unexpectedException: 0, error: 1 });
  expect(denied!.allTimeRates?.error).toBe(1);
  expect(denied!.alertThresholds?.error).toBe(0.5);
  expect(denied!.alerts).toEqual(['error: 100% > 50%']);

  const { code, out } = await ctl('stats', 'denied');
  expect(code).toBe(0);
  expect(out.split('\n')).toEqual([
    expect.stringMatching(/^denied\s+4 calls {2}breaker closed {2}health 1\.00$/),
    '  last 15 min, 4 calls: validation 0.0%  timeout 0.0%  retry 0.0%  idempotent 0.0%  bounding 0.0%  unexpected 0.0%  errors 100.0%',
    '  ALERT error: 100% > 50%',
  ]);
  const fine = await ctl('stats', 'fine');
  expect(fine.out).toContain('errors 0.0%');
  expect(fine.out).not.toContain('ALERT');
});
