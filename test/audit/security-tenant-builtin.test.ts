import { status } from '@grpc/grpc-js';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startApp } from '../helpers/servers';

// An embedder's built-ins (`builtins` of createPipeline) run the operator's code inside dispatch,
// and the config file shares them as it declares them: here `charge`, side-effecting, its amount at
// most 100, behind an `ask` (blocked in a headless Dispatch). A tenant with `admin` registered
// `my_charge` naming the same built-in as read-only with the schema {"type":"object"}: its calls ran
// the charge past the ask and the schema, twice for the same arguments (no idempotency record);
// declared side-effecting, still past both. Refused now, as an mcp executor is, whatever the
// built-in (one the config file never declares, or none at all: the refusal tells nothing of which
// exist). The service's own echo and sleep act on their arguments alone and stay open to tenants.

const YAML = `
tools:
  - name: charge
    effect: side_effect
    input_schema: '{"type":"object","properties":{"amount":{"type":"integer","maximum":100}},"required":["amount"]}'
    builtin: { name: charge }
policies:
  - match: charge
    decide: ask
    reason: charging needs a human
`;

const refused = (name: string, builtin: string) =>
  `tools[0] ("${name}"): builtin "${builtin}" is refused: tenants may register the built-ins echo and sleep only; the others run the operator's code inside dispatch and are shared as the config file declares them (its names, effects and policies); call the config file's tool, ask the operator to declare one, or register an http or worker tool`;

const tool = (name: string, builtin: string, effect = Effect.READ_ONLY) => ({ name, effect, skipMemoize: effect === Effect.READ_ONLY, inputSchema: '{"type":"object"}', executor: { case: 'builtin' as const, value: { name: builtin } } });

async function start() {
  const runs: unknown[] = [];
  const charge = async (args: unknown) => (runs.push(args), 'charged');
  const d = await startApp(YAML, { env: {}, pipeline: { builtins: new Map([['charge', charge], ['refund', charge]]) } });
  return { d, runs };
}

test("a tenant's tool naming an embedder's built-in is refused PERMISSION_DENIED, as read-only or side-effecting: nothing registered, the built-in never runs", async () => {
  const { d, runs } = await start();
  try {
    for (const effect of [Effect.READ_ONLY, Effect.SIDE_EFFECT]) {
      await expect(d.registry.registerTools({ tools: [tool('my_charge', 'charge', effect)] })).rejects.toMatchObject({ code: status.PERMISSION_DENIED, details: refused('my_charge', 'charge') });
      await expect(d.registry.registerTools({ tools: [tool('my_charge', 'charge', effect)], replace: true })).rejects.toMatchObject({ code: status.PERMISSION_DENIED });
    }
    expect((await d.registry.listTools({})).tools.map((t) => t.name)).toEqual(['charge']);
    for (const id of ['a', 'b']) {
      const { results } = await d.dispatch.dispatch({ sessionId: 's', calls: [{ id, name: 'my_charge', arguments: '{"amount":100000}' }] });
      expect(JSON.parse(results[0]!.output)).toMatchObject({ kind: 'UNKNOWN_TOOL' });
    }
    const { results } = await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 'charge', arguments: '{"amount":5}' }] });
    expect(JSON.parse(results[0]!.output)).toMatchObject({ kind: 'BLOCKED' });
    expect(runs).toEqual([]);
  } finally {
    await d.close();
  }
});

test('one the config file never declares, or no built-in at all, is refused the same way; nothing of a request holding one is registered', async () => {
  const { d, runs } = await start();
  try {
    await expect(d.registry.registerTools({ tools: [tool('give_back', 'refund', Effect.SIDE_EFFECT)] })).rejects.toMatchObject({ code: status.PERMISSION_DENIED, details: refused('give_back', 'refund') });
    await expect(d.registry.registerTools({ tools: [tool('other', 'nope')] })).rejects.toMatchObject({ code: status.PERMISSION_DENIED, details: refused('other', 'nope') });
    await expect(d.registry.registerTools({ tools: [tool('mine', 'echo'), tool('give_back', 'refund')] })).rejects.toMatchObject({
      code: status.PERMISSION_DENIED,
      details: refused('give_back', 'refund').replace('tools[0]', 'tools[1]'),
    });
    expect((await d.registry.listTools({})).tools.map((t) => t.name)).toEqual(['charge']);
    expect(runs).toEqual([]);
  } finally {
    await d.close();
  }
});

test("the service's echo and sleep stay open to tenants, under their own names and effects", async () => {
  const { d } = await start();
  try {
    await expect(d.registry.registerTools({ tools: [tool('say', 'echo', Effect.SIDE_EFFECT), tool('nap', 'sleep')] })).resolves.toMatchObject({ registered: 2 });
    const { results } = await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'a', name: 'say', arguments: '{"n":1}' }, { id: 'b', name: 'nap', arguments: '{"ms":1}' }] });
    expect(results.map((r) => r.output)).toEqual(['{"n":1}', '{"ms":1}']);
  } finally {
    await d.close();
  }
});
