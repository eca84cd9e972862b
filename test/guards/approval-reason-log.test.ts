import { createLogger } from '../../src/log';
import { json, startApp, startToolServer, type ToolServer } from '../helpers/servers';

// A privacy review's finding: the approver's reason, redacted in its APPROVAL_RESOLVED event, was
// logged at info whole ("approval resolved", reason "no. password: hunter2 ..."), into the
// operator's log pipeline, and reached the model in the BLOCKED message. Both now redact it as the event does.

jest.setTimeout(20_000);

const lines: Record<string, unknown>[] = [];
let tools: ToolServer;
let d: Awaited<ReturnType<typeof startApp>>;
beforeAll(async () => {
  tools = await startToolServer({ '/deploy': json({ deployed: true }) });
  const logger = createLogger('info', (line) => lines.push(JSON.parse(line) as Record<string, unknown>) > 0);
  d = await startApp(
    `
tools:
  - { name: deploy, effect: side_effect, input_schema: '{"type":"object"}', http: { url: "${tools.url}/deploy" } }
policies:
  - { match: deploy, decide: ask, reason: changes production }
`,
    { logger },
  );
});
afterAll(async () => {
  await d?.close();
  await tools?.close();
});

test("the approver's reason is logged, and told the model, redacted as its event shows it", async () => {
  const pending = d.dispatch.dispatch({ sessionId: 's', interactive: true, calls: [{ id: 'c', name: 'deploy', arguments: '{"env":"production"}' }] });
  let approvalId = '';
  for (let i = 0; i < 100 && approvalId === ''; i++) {
    approvalId = (await d.dispatch.listApprovals({})).approvals[0]?.approvalId ?? '';
    if (approvalId === '') await new Promise((r) => setTimeout(r, 20));
  }
  const reason = 'no. password: hunter2 token ghp_abcdefghijklmnopqrstuvwxyz0123456789';
  expect((await d.dispatch.resolveApproval({ approvalId, approve: false, reason })).resolved).toBe(true);
  // The model reads the denial's reason redacted too.
  expect((await pending).results[0]!.error?.message).toBe('approval was not granted: changes production; the approver said: no. password: [REDACTED:secret] token [REDACTED:github_token]');
  const logged = lines.find((line) => line.message === 'approval resolved');
  expect(logged?.reason).toBe('no. password: [REDACTED:secret] token [REDACTED:github_token]');
  expect(JSON.stringify(lines)).not.toMatch(/hunter2|ghp_abc/);
});
