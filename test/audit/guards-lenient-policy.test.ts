import { DispatchMode, ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { json, startToolServer, type ToolServer } from '../helpers/servers';
import { errorJson, startGuardedApp } from '../guards/helpers';

// Issue 4 item 3 with issue 2 item 5's lenient repair: rules read the arguments after repair
// (docs/policies.md), so a model that writes `"amount": "5000"` for a number is held to
// `amount > 1000` like one that writes 5000, in both modes; a `modify` applies to the repaired
// arguments, and the tool receives both changes. No test combined a rule with a lenient tool.

let tools: ToolServer;
let d: Awaited<ReturnType<typeof startGuardedApp>>;
beforeAll(async () => {
  tools = await startToolServer({ '/pay': json({ paid: true }) });
  d = await startGuardedApp(`
tools:
  - name: pay
    effect: side_effect
    concurrency_safe: true
    lenient_arguments: true
    input_schema: '{"type":"object","properties":{"amount":{"type":"number"},"express":{"type":"boolean"},"to":{"type":"array","items":{"type":"string"}}},"required":["amount"]}'
    http: { url: "${tools.url}/pay" }
policies:
  - { match: pay, when: [{ pointer: /amount, op: ">", value: 1000 }], decide: block, reason: payments over 1000 need a human }
  - { match: pay, when: [{ pointer: /express, op: "=", value: true }], decide: modify, set: { /express: false } }
`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

test.each([DispatchMode.SEQUENTIAL, DispatchMode.PARALLEL])('a repaired amount is judged as the number it became (mode %i)', async (mode) => {
  const before = tools.count('/pay');
  const { results } = await d.dispatch.dispatch({
    sessionId: `m${mode}`,
    mode,
    calls: [
      { id: 'big', name: 'pay', arguments: '{"amount":"5000"}' },
      { id: 'small', name: 'pay', arguments: '{"amount":"5","to":"bob"}' },
    ],
  });
  expect(results[0]!.error?.kind).toBe(ErrorKind.BLOCKED);
  expect(errorJson(results[0]!.output).message).toBe('blocked by policy: payments over 1000 need a human');
  expect(results[1]!.isError).toBe(false);
  expect(tools.count('/pay') - before).toBe(1);
  expect(tools.received.at(-1)!.body.arguments).toEqual({ amount: 5, to: ['bob'] });
});

test('a modify applies to the repaired arguments: the tool gets both changes', async () => {
  const { results } = await d.dispatch.dispatch({ sessionId: 'mod', calls: [{ id: 'c', name: 'pay', arguments: '{"amount":"7","express":"true"}' }] });
  expect(results[0]!.isError).toBe(false);
  expect(tools.received.at(-1)!.body.arguments).toEqual({ amount: 7, express: false });
});
