import { readFileSync } from 'node:fs';
import { parseConfig } from '../../src/config';
import { parsePolicies } from '../../src/guards';
import type { ResolvedTool } from '../../src/registry';
import { budgetWarning } from '../../src/pipeline/refusals';
import { json, startToolServer, type ToolServer } from '../helpers/servers';
import { errorJson, startGuardedApp } from '../guards/helpers';

// Claims of docs/policies.md that no other test held the service to (audit): its YAML examples
// load, a modify the schema refuses, the endpoint failing closed on a redirect or a bare modify and
// asked again on each attempt, a block winning over a rule's ask, and when a budget's warning starts.

const SCHEMA = `'{"type":"object","properties":{"amount":{"type":"number"}},"additionalProperties":false}'`;
let server: ToolServer;
let payCalls = 0;
let d: Awaited<ReturnType<typeof startGuardedApp>> | undefined;

beforeEach(async () => {
  payCalls = 0;
  server = await startToolServer({
    // 503 twice, then an answer: the call takes three attempts.
    '/pay': (_req, res) => void (++payCalls < 3 ? res.writeHead(503).end('busy') : res.writeHead(200).end('{"ok":true}')),
    '/allow': json({ decision: 'allow' }),
    '/block': json({ decision: 'block', reason: 'the policy service says no' }),
    '/modify-bare': json({ decision: 'modify' }),
    '/redirect': (_req, res) => void res.writeHead(302, { location: '/allow' }).end(),
  });
});
afterEach(async () => {
  await d?.close();
  d = undefined;
  await server.close();
});

const start = async (policies: string) =>
  (d = await startGuardedApp(`
tools:
  - { name: pay, effect: read_only, retry: { max_attempts: 3, initial_backoff_ms: 1, max_backoff_ms: 5 }, input_schema: ${SCHEMA}, http: { url: "${server.url}/pay" } }
policies:
${policies}`));
const pay = async (interactive = false) => (await d!.dispatch.dispatch({ sessionId: 's', interactive, calls: [{ id: 'c', name: 'pay', arguments: '{"amount":1}' }] })).results[0]!;

test('a modify whose result the schema refuses blocks the call, unrun', async () => {
  await start('  - { decide: modify, set: { /extra: 1 } }');
  expect(errorJson((await pay()).output)).toMatchObject({ kind: 'BLOCKED', message: 'a policy modified the arguments into ones the schema refuses (invalid arguments: /: unexpected property "extra" (the schema allows no other properties))' });
  expect(payCalls).toBe(0);
});

test('the endpoint fails closed on a redirect and on modify without arguments; it is asked again on every attempt', async () => {
  await start(`  - endpoint: { url: "${server.url}/redirect" }`);
  expect(errorJson((await pay()).output).message).toBe('blocked by policy: the policy service could not be consulted (it answered HTTP 302), so the call was refused');
  expect(server.count('/allow')).toBe(0);
  await d!.close();
  await start(`  - endpoint: { url: "${server.url}/modify-bare" }`);
  expect(errorJson((await pay()).output).message).toBe('blocked by policy: the policy service could not be consulted (it answered modify without arguments), so the call was refused');
  expect(payCalls).toBe(0);
  await d!.close();
  await start(`  - endpoint: { url: "${server.url}/allow" }`);
  expect((await pay()).output).toBe('{"ok":true}');
  expect([payCalls, server.count('/allow')]).toEqual([3, 3]);
});

test("the endpoint's block wins over a rule's ask: refused at once, nobody asked", async () => {
  await start(`  - { decide: ask, reason: a human decides }\n  - endpoint: { url: "${server.url}/block" }`);
  expect(errorJson((await pay(true)).output)).toMatchObject({ kind: 'BLOCKED', message: 'blocked by policy: the policy service says no' });
  expect(d!.events.filter((e) => e.kind === 'APPROVAL_REQUESTED')).toEqual([]);
  expect(payCalls).toBe(0);
});

test("a budget's warning starts at a fifth of it left, and at one call left whatever the budget", () => {
  const tool = { name: 'send_email' } as ResolvedTool;
  const warned = (max: number, left: number) => {
    const warnings: string[] = [];
    budgetWarning(tool, { id: 'send_*', max }, left, warnings);
    return warnings;
  };
  expect([warned(20, 5), warned(20, 4)]).toEqual([[], ['this session has 4 calls left of its budget of 20 calls of tools matching send_* (policies budget:)']]);
  expect([warned(3, 2), warned(3, 1).length, warned(3, 0)]).toEqual([[], 1, ["this was the last call of this session's budget of 3 calls of tools matching send_* (policies budget:)"]]);
});

test("the doc's YAML examples load as they read", () => {
  const blocks = [...readFileSync('docs/policies.md', 'utf8').matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const loaded = blocks.map((block) => {
    // A fragment of a tool (loop:) goes in a tool; one of the policies list, under policies:.
    if (block.trimStart().startsWith('loop:')) return parseConfig(`tools:\n  - { name: t, input_schema: '{}', builtin: { name: echo }, ${block.trim()} }`, 'dispatch.yaml').tools[0]!.loop;
    const config = parseConfig(block.startsWith('policies:') ? block : `policies:\n${block}`, 'dispatch.yaml');
    const p = parsePolicies(config.policies, 'dispatch.yaml');
    return [p.rules.map((r) => r.decide).join(), p.endpoint?.timeoutMs, p.breakers.length, p.after.length, p.concurrency.map((c) => c.waitMs).join(), p.rates.map((r) => `${r.perSecond}/${r.burst}`).join(), p.budgets.map((b) => b.maxCalls).join()];
  });
  expect(loaded).toEqual([
    ['block,modify,ask', 2000, 1, 1, '1000', '5/10', '20'],
    ['', undefined, 0, 0, '', '5/10,0.5/1', ''],
    ['', undefined, 0, 0, '', '', '20'],
    expect.objectContaining({ warnThreshold: 3, stopThreshold: 10, failureWarnThreshold: 2, failureBlockThreshold: 5, blockCooldownMs: 30000, assumedWaitMs: 1000 }),
  ]);
});
