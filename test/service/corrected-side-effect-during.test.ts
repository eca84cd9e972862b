import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startGuardedApp } from '../guards/helpers';
import { startToolServer, type ToolServer } from '../helpers/servers';

// Found in a pipeline review: a reflector's correction (fixed arguments from `fixArguments`, or a
// custom reflector's fallback) was applied whatever the failure, so a side-effecting tool that
// timed out while it ran (its effect unknown) was run again with the corrected arguments: another
// idempotency key, so no record stopped it, and the email went out twice. DESIGN section 4: a
// DURING failure of a side-effecting tool is never retried; the model is told its outcome is unknown.
// Real HTTP tool behind a real gRPC dispatch.

let tools: ToolServer;
let d: Awaited<ReturnType<typeof startGuardedApp>> | undefined;

beforeEach(async () => {
  // Takes the request (and, say, sends the email), then answers too late.
  tools = await startToolServer({ '/send': (_req, res) => void setTimeout(() => res.writeHead(200).end('sent'), 1_000).unref(), '/other': (_req, res) => void res.writeHead(200).end('other sent') });
});
afterEach(async () => {
  await d?.close();
  d = undefined;
  await tools.close();
});

const yaml = () => `
tools:
  - { name: send, effect: side_effect, timeout_ms: 200, input_schema: '{"type":"object"}', http: { url: "${tools.url}/send" } }
  - { name: other_send, effect: side_effect, input_schema: '{"type":"object"}', http: { url: "${tools.url}/other" } }
`;

const send = async () => (await d!.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c1', name: 'send', arguments: '{"to":"a@example.com"}' }] })).results[0]!;

test('a side-effecting call that timed out while it ran is not run again with corrected arguments', async () => {
  d = await startGuardedApp(yaml(), { fixArguments: ({ args }) => ({ ...(args as object), retried: true }) });
  const result = await send();
  expect(tools.count('/send')).toBe(1);
  expect(result).toMatchObject({ isError: true, attempts: 1 });
  expect(result.error).toMatchObject({ kind: ErrorKind.TIMEOUT, recoverable: false });
});

test('a side-effecting call that timed out while it ran does not fall back to another side-effecting tool', async () => {
  d = await startGuardedApp(yaml(), { reflector: { reflect: () => ({ retry: true, delayMs: 0, reason: 'fall back', correction: { tool: 'other_send' } }) } });
  const result = await send();
  expect(tools.count('/send') + tools.count('/other')).toBe(1);
  expect(result).toMatchObject({ isError: true, attempts: 1 });
  expect(result.error).toMatchObject({ kind: ErrorKind.TIMEOUT, recoverable: false });
});
