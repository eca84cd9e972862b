import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { json, startToolServer, type ToolServer } from '../helpers/servers';
import { errorJson, startGuardedApp } from './helpers';

// Found by a probe: a policy service that timed out or answered 5xx refused every call BLOCKED,
// "do not retry this call", as a decision to refuse would: a passing outage read to the model as a
// permanent refusal, and (since refusals are loop-detected) the 10th identical call ended the turn.
// It is UNAVAILABLE now, recoverable, with retry_after_ms, not retried within the turn, and no
// refusal loop detection counts; a service answering nonsense still blocks.

let tools: ToolServer;
let down = true;
let asked = 0;
beforeAll(async () => {
  tools = await startToolServer({
    '/search': json({ hits: [] }),
    '/policy': (_req, res) => {
      asked++;
      if (down) res.writeHead(503).end('maintenance');
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{"decision":"allow"}');
    },
    '/policy-nonsense': (_req, res) => void res.writeHead(302, { location: '/elsewhere' }).end(),
  });
});
afterAll(() => tools.close());

const yaml = (path: string) => `
tools:
  - name: search
    effect: read_only
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/search" }
policies:
  - endpoint: { url: "${tools.url}${path}", timeout_ms: 1000 }
`;
const search = (id: string) => ({ id, name: 'search', arguments: '{"q":"x"}' });

test('a policy service that is down refuses calls for now, recoverable, uncounted by loop detection, and lets them through once back', async () => {
  const d = await startGuardedApp(yaml('/policy'));
  try {
    for (let i = 0; i < 12; i++) {
      const { results } = await d.dispatch.dispatch({ sessionId: 's', calls: [search(`c${i}`)] });
      const r = results[0]!;
      expect(r.error?.kind).toBe(ErrorKind.UNAVAILABLE);
      expect(errorJson(r.output)).toMatchObject({ recoverable: true, retry_after_ms: 1000, message: 'the policy service could not be consulted (it answered HTTP 503), so the call was not executed' });
      expect(r.warnings.filter((w) => w.startsWith('loop'))).toEqual([]);
    }
    // Asked once per call: not retried within the turn.
    expect(asked).toBe(12);
    expect(tools.count('/search')).toBe(0);
    down = false;
    const { results } = await d.dispatch.dispatch({ sessionId: 's', calls: [search('after')] });
    expect(results[0]!.isError).toBe(false);
  } finally {
    await d.close();
  }
});

test('a policy service answering nonsense blocks the call, as a refusal', async () => {
  const d = await startGuardedApp(yaml('/policy-nonsense'));
  try {
    const { results } = await d.dispatch.dispatch({ sessionId: 's', calls: [search('c')] });
    expect(results[0]!.error?.kind).toBe(ErrorKind.BLOCKED);
    expect(errorJson(results[0]!.output).message).toBe('blocked by policy: the policy service could not be consulted (it answered HTTP 302), so the call was refused');
  } finally {
    await d.close();
  }
});
