import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { json, startToolServer, type ToolServer } from '../helpers/servers';
import { startGuardedApp } from './helpers';

// A call's own retries were counted as the model repeating it: a read-only tool that failed with
// retries (2 attempts) warned "failed the same way 2 times" on the first call, two warnings rode
// on the second, and the third call's retry was refused LOOP_BLOCKED, hiding the real error.
// DESIGN section 6 counts the model's calls: a retry failing as its call's last attempt did is
// recorded once.

const yaml = (url: string) => `
policies:
  - match: down
    breaker: { consecutive_failures: 100 }
tools:
  - name: down
    effect: read_only
    retry: { max_attempts: 2, initial_backoff_ms: 1, max_backoff_ms: 1 }
    input_schema: '{"type":"object"}'
    http: { url: "${url}/down" }
  - name: flaky
    effect: read_only
    retry: { max_attempts: 3, initial_backoff_ms: 1, max_backoff_ms: 1 }
    input_schema: '{"type":"object"}'
    http: { url: "${url}/flaky" }
`;

const loopWarnings = (warnings: readonly string[]) => warnings.filter((w) => w.startsWith('loop warning'));

describe("a call's retries are not the model's repeats", () => {
  let tools: ToolServer;
  let d: Awaited<ReturnType<typeof startGuardedApp>>;
  let flakyHits = 0;
  beforeEach(async () => {
    flakyHits = 0;
    tools = await startToolServer({
      '/down': json({ error: 'down for maintenance' }, 0, 503),
      // Fails twice the same way, then answers: the three attempts of one call.
      '/flaky': (_req, res) => {
        if (flakyHits++ % 3 === 2) res.writeHead(200).end('fine');
        else res.writeHead(503).end('busy');
      },
    });
    d = await startGuardedApp(yaml(tools.url));
  });
  afterEach(async () => {
    await d.close();
    await tools.close();
  });

  const callDown = async (i: number) => (await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: `c${i}`, name: 'down', arguments: '{}' }] })).results[0]!;

  test('each failing call counts once: warnings from the 2nd call, one per result, LOOP_BLOCKED only at the 6th, its real error shown until then', async () => {
    const results = [];
    for (let i = 1; i <= 5; i++) results.push(await callDown(i));
    for (const r of results) {
      expect(r.attempts).toBe(2);
      expect(ErrorKind[r.error!.kind]).toBe('TOOL_ERROR');
    }
    expect(results.map((r) => loopWarnings(r.warnings))).toEqual([
      [],
      ['loop warning: this call has failed the same way 2 times in a row; change the arguments or the approach'],
      ['loop warning: this call has failed the same way 3 times in a row; change the arguments or the approach'],
      ['loop warning: this call has failed the same way 4 times in a row; change the arguments or the approach'],
      ['loop warning: this call has failed the same way 5 times in a row; change the arguments or the approach'],
    ]);
    expect(tools.count('/down')).toBe(10);
    const sixth = await callDown(6);
    expect(ErrorKind[sixth.error!.kind]).toBe('LOOP_BLOCKED');
    expect(sixth.error!.message).toContain('failed the same way 5 times in a row');
    expect(tools.count('/down')).toBe(10);
    expect(d.events.filter((e) => e.kind === 'LOOP_WARNING')).toHaveLength(4);
  });

  test('a call whose retries fail the same way, then succeed, carries no loop warning', async () => {
    const r = (await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'f1', name: 'flaky', arguments: '{}' }] })).results[0]!;
    expect(r.isError).toBe(false);
    expect(r.output).toBe('fine');
    expect(r.attempts).toBe(3);
    expect(loopWarnings(r.warnings)).toEqual([]);
  });
});
