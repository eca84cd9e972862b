import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startToolServer, type ToolServer } from '../helpers/servers';
import { startGuardedApp } from './helpers';

// HTTP 408 (the tool's server timed out waiting) is transient, as a 5xx is (8c59f83): it also says
// as much about the tool's health, so it counts against the breaker and leads to the fallback
// tool, as a 5xx does. Through the real service and real HTTP tools.

let tools: ToolServer;
let d: Awaited<ReturnType<typeof startGuardedApp>>;
afterEach(async () => {
  await d.close();
  await tools.close();
});

const yaml = (url: string) => `
policies:
  - match: slow
    breaker: { consecutive_failures: 2, half_open_after_ms: 60000 }
tools:
  - name: slow
    effect: read_only
    input_schema: '{"type":"object"}'
    retry: { max_attempts: 1 }
    http: { url: "${url}/slow" }
  - name: primary
    effect: read_only
    input_schema: '{"type":"object"}'
    retry: { max_attempts: 1 }
    fallback_tool: backup
    http: { url: "${url}/slow" }
  - name: backup
    effect: read_only
    input_schema: '{"type":"object"}'
    http: { url: "${url}/backup" }
`;

let n = 0;
const one = (name: string) => d.dispatch.dispatch({ sessionId: 's', calls: [{ id: `c${++n}`, name, arguments: `{"n":${n}}` }] }).then((r) => r.results[0]!);

beforeEach(async () => {
  tools = await startToolServer({
    '/slow': (_req, res) => void res.writeHead(408).end('request timeout'),
    '/backup': (_req, res) => void res.writeHead(200).end('from backup'),
  });
  d = await startGuardedApp(yaml(tools.url));
});

test('408s count against the breaker: after two, the tool is refused BREAKER_OPEN without being called', async () => {
  expect((await one('slow')).error?.kind).toBe(ErrorKind.TOOL_ERROR);
  expect((await one('slow')).error?.kind).toBe(ErrorKind.TOOL_ERROR);
  const third = await one('slow');
  expect(third.error?.kind).toBe(ErrorKind.BREAKER_OPEN);
  expect(tools.count('/slow')).toBe(2);
});

test("a 408 leads to the tool's fallback_tool, as a 5xx does", async () => {
  const result = await one('primary');
  expect(result.isError).toBe(false);
  expect(result.output).toBe('from backup');
  expect(result.resolvedToolName).toBe('backup');
  expect(result.warnings).toContain('fell back from "primary" to "backup": "primary" failed with TOOL_ERROR');
});
