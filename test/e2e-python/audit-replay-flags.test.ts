// Audit of examples/python/backend.py against DESIGN's replay flags: a side-effecting call made
// again in the session (a new tool_call_id, the same key arguments) is answered from its
// idempotency record with idempotent_replay set, the tool not run; a read-only tool's memoized
// answer is marked cached. The backend printed both as fresh successes, so an agent copying it
// told the model an email went out twice when it went out once. Also: a LOOP_BLOCKED refusal's
// retry_after_ms is not waited for (the README says only recoverable errors' are).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { json, startApp, startToolServer, type ToolServer } from '../helpers/servers';
import { describeWithPython, finished, runPython } from './python';

const config = (url: string) => `tools:
  - name: send_email
    effect: side_effect
    idempotency: { key_fields: ["/to", "/subject"] }
    input_schema: '{"type":"object","properties":{"to":{"type":"string"},"subject":{"type":"string"},"body":{"type":"string"}},"required":["to","subject"]}'
    http: { url: "${url}/email" }
  - name: echo
    effect: read_only
    input_schema: '{"type":"object"}'
    builtin: { name: echo }
  - name: lookup
    effect: read_only
    skip_memoize: true
    input_schema: '{"type":"object"}'
    http: { url: "${url}/missing" }
`;
const turn = (id: string, name: string, args: unknown) => JSON.stringify([{ id, name, arguments: JSON.stringify(args) }]);

describeWithPython('backend.py and the replay flags', () => {
  let t: Awaited<ReturnType<typeof startApp>>;
  let tools: ToolServer;
  const stubDir = mkdtempSync(path.join(tmpdir(), 'py-stubs-'));
  beforeAll(async () => {
    tools = await startToolServer({ '/email': json({ sent: true }), '/missing': json({ error: 'no such id' }, 0, 404) });
    t = await startApp(config(tools.url));
  });
  afterAll(async () => {
    await t.close();
    await tools.close();
    rmSync(stubDir, { recursive: true, force: true });
  });

  it('says a side effect sent again under a new tool_call_id was replayed, not run, and a memoized read cached', async () => {
    const email = { to: 'a@example.com', subject: 'hi', body: 'x' };
    const args = ['--address', t.address, '--calls', turn('e1', 'send_email', email), '--calls', turn('e2', 'send_email', { ...email, body: 'y' }), '--calls', turn('r1', 'echo', { q: 1 }), '--calls', turn('r2', 'echo', { q: 1 })];
    const { code, out } = await finished(runPython('backend.py', args, { DISPATCH_PY_STUBS: path.join(stubDir, 'stubs') }), 40_000);
    expect(code).toBe(0);
    expect(tools.count('/email')).toBe(1);
    const turns = out.split(/^-- turn \d\n/m).slice(1);
    expect(turns[0]).toBe('e1 ok tool=send_email attempts=1: {"sent":true}\n');
    // Its body differs from the first call's: the replay says it was not sent (a warning, before the backend's own line).
    expect(turns[1]).toMatch(/^e2 ok tool=send_email attempts=\d: \{"sent":true\}\n {2}warning: this is the result of an earlier call with the same \/to, \/subject, replayed.*\n {2}replayed: .*did not run again.*\n$/);
    expect(turns[2]).toBe('r1 ok tool=echo attempts=1: {"q":1}\n');
    expect(turns[3]).toMatch(/^r2 ok tool=echo attempts=\d: \{"q":1\}\n {2}cached: .*\n$/);
  }, 60_000);

  it("prints a LOOP_BLOCKED refusal's retry_after_ms in the error JSON only, and does not wait it out (not recoverable)", async () => {
    const turns = Array.from({ length: 6 }, (_, i) => ['--calls', turn(`l${i + 1}`, 'lookup', { id: 7 })]).flat();
    const { code, out } = await finished(runPython('backend.py', ['--address', t.address, ...turns], { DISPATCH_PY_STUBS: path.join(stubDir, 'stubs') }), 40_000);
    expect(code).toBe(0);
    expect(tools.count('/missing')).toBe(5);
    const last = out.split(/^-- turn \d\n/m).at(-1)!;
    expect(last).toMatch(/^l6 error LOOP_BLOCKED tool=lookup attempts=\d: .*"retry_after_ms":\d+/);
    expect(out).not.toMatch(/^ {2}retry_after_ms: |^waiting /m);
  }, 60_000);
});
