import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startApp, type TestDispatch } from '../helpers/servers';

// Lenient repair over the wire, found by a hunt: an enum value turned into its opposite on a
// side-effecting tool (deactivate -> activate); JSON text in a string decoded past the exact-number
// guard ([9007199254740993] reached the tool as [9007199254740992], {"a":1e400} as {"a":null}) and
// past the depth limit (100 levels reached the tool; 5,000 crashed as UNEXPECTED "the tool
// crashed", counted against the tool); `{"notify":null}` became `notify: true` (the default).
// The tool records the exact bytes it receives.

let raw: string[] = [];
let tool: Server;
let d: TestDispatch;

beforeAll(async () => {
  tool = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      raw.push(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(200).end('done');
    });
  });
  await new Promise<void>((resolve) => tool.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(tool.address() as AddressInfo).port}`;
  d = await startApp(`
tools:
  - name: manage_account
    effect: side_effect
    lenient_arguments: true
    input_schema: '{"type":"object","properties":{"user":{"type":"string"},"action":{"type":"string","enum":["activate","suspend","delete","export","publish","subscribe","cancel"]},"notify":{"type":"boolean","default":true}},"required":["user","action"],"additionalProperties":false}'
    http: { url: "${url}/account" }
  - name: refund_orders
    effect: side_effect
    lenient_arguments: true
    input_schema: '{"type":"object","properties":{"order_ids":{"type":"array","items":{"type":"integer"}},"filter":{"type":"object"}},"additionalProperties":false}'
    http: { url: "${url}/refund" }
  - name: update_subscription
    effect: side_effect
    lenient_arguments: true
    input_schema: '{"type":"object","properties":{"action":{"type":"string","enum":["change","cancel","pause"]},"seats":{"type":"integer"},"note":{"type":["string","null"],"default":"n/a"},"coupon":{"anyOf":[{"type":"string"},{"type":"null"}],"default":""}},"required":["action"],"additionalProperties":false}'
    http: { url: "${url}/subscription" }
`);
});
afterAll(async () => {
  await d.close();
  tool.closeAllConnections();
  await new Promise<void>((resolve) => tool.close(() => resolve()));
});
beforeEach(() => {
  raw = [];
});

let session = 0;
const call = (name: string, args: string) =>
  d.dispatch.dispatch({ sessionId: `lenient-${session++}`, calls: [{ id: 'c', name, arguments: args }] }).then((r) => r.results[0]!);
/** The arguments the tool received, as bytes. */
const received = (): string[] => raw.map((body) => JSON.stringify((JSON.parse(body) as { arguments: unknown }).arguments));

test('an enum value is not turned into its opposite: refused, nothing runs', async () => {
  for (const action of ['deactivate', 'unsuspend', 'undelete', 'import', 'unpublish', 'unsubscribe']) {
    const result = await call('manage_account', JSON.stringify({ user: 'alice', action }));
    expect(result.error?.kind).toBe(ErrorKind.INVALID_ARGUMENTS);
    expect(result.error?.message).toContain(`/action: got "${action}" (string)`);
  }
  expect(raw).toEqual([]);
});

test('a misspelt enum value is still corrected, and says so', async () => {
  const result = await call('manage_account', '{"user":"alice","action":"cancell"}');
  expect(result.isError).toBe(false);
  expect(result.warnings).toContain('repaired /action: "cancell" -> "cancel" (enum value corrected)');
  expect(raw).toHaveLength(1);
  expect(raw[0]).toContain('"arguments":{"user":"alice","action":"cancel","notify":true}');
});

test('null for a field with a default is not replaced by the default: refused, nothing runs', async () => {
  const result = await call('manage_account', '{"user":"alice","action":"delete","notify":null}');
  expect(result.error?.kind).toBe(ErrorKind.INVALID_ARGUMENTS);
  expect(result.error?.message).toContain('/notify: null not dropped, as the default true would take its place (send the value meant, or leave the field out); the tool was not executed');
  expect(raw).toEqual([]);
});

test('JSON text holding a number a double does not keep is not decoded: refused, nothing runs', async () => {
  const ids = await call('refund_orders', '{"order_ids":"[9007199254740993, 12345678901234567891]"}');
  expect(ids.error?.kind).toBe(ErrorKind.INVALID_ARGUMENTS);
  expect(ids.error?.message).toContain(
    '/order_ids: JSON text not decoded: the number 9007199254740993 in the arguments cannot be passed on exactly (integers beyond ±9007199254740991 and numbers beyond ±1.8e308 would change); the tool was not executed',
  );
  const huge = await call('refund_orders', '{"filter":"{\\"amount_over\\":1e400}"}');
  expect(huge.error?.kind).toBe(ErrorKind.INVALID_ARGUMENTS);
  expect(huge.error?.message).toContain('/filter: JSON text not decoded: the number 1e400 in the arguments');
  expect(raw).toEqual([]);
  // Exact numbers still decode, and reach the tool as sent.
  const exact = await call('refund_orders', '{"order_ids":"[9007199254740991, 12]","filter":"{\\"amount_over\\":1e300}"}');
  expect(exact.isError).toBe(false);
  expect(received()).toEqual(['{"order_ids":[9007199254740991,12],"filter":{"amount_over":1e+300}}']);
});

test('JSON text decoded within the depth limit of 64 only; deeper is INVALID_ARGUMENTS, nothing runs, nothing counted against the tool', async () => {
  // The filter sits one level in: decoded text of depth 63 makes 64 levels, of 64 makes 65.
  const nested = (depth: number) => JSON.stringify({ filter: `{"x":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}` });
  const fits = await call('refund_orders', nested(63));
  expect(fits.isError).toBe(false);
  expect(raw).toHaveLength(1);
  raw = [];
  for (const depth of [64, 100, 5000]) {
    const result = await call('refund_orders', nested(depth));
    expect(result.error?.kind).toBe(ErrorKind.INVALID_ARGUMENTS);
    expect(result.error?.message).toContain('/filter: JSON text not decoded: the arguments would nest deeper than 64 levels; the tool was not executed');
  }
  expect(raw).toEqual([]);
  const { stats } = await d.registry.getToolStats({ tool: 'refund_orders' });
  expect(stats).toHaveLength(1);
  expect(stats[0]!.rates?.unexpectedException).toBe(0);
  expect(stats[0]!.alerts.filter((alert) => alert.startsWith('unexpected'))).toEqual([]);
});

test('on a side-effecting tool an enum value is corrected only for a doubled letter: charge is not change, cancle not cancel, cancell is', async () => {
  for (const action of ['charge', 'parse', 'cancle']) {
    const result = await call('update_subscription', JSON.stringify({ action }));
    expect(result.error?.kind).toBe(ErrorKind.INVALID_ARGUMENTS);
    expect(result.error?.message).toContain(`/action: got "${action}" (string)`);
  }
  expect(raw).toEqual([]);
  const typo = await call('update_subscription', '{"action":"cancell"}');
  expect(typo.warnings).toContain('repaired /action: "cancell" -> "cancel" (enum value corrected)');
  expect(received()).toEqual(['{"action":"cancel","note":"n/a","coupon":""}']);
});

// A near miss refused on a side-effecting tool listed the allowed values but no "did you mean"
// (found by the last session): the nearest value is now named, in the message and the suggestion,
// and never applied; an opposite names none.
test('an enum near miss not corrected is answered with a "did you mean", and nothing runs', async () => {
  const result = await call('update_subscription', '{"action":"charge","seats":2}');
  expect(result.error?.kind).toBe(ErrorKind.INVALID_ARGUMENTS);
  expect(result.error?.message).toContain(
    '/action: "charge" is not an allowed value; did you mean "change"? (not corrected: on a tool with side effects only a doubled letter is corrected, as other typos often spell another word); the tool was not executed',
  );
  expect(result.error?.suggestion).toBe('If you meant "change" for /action, call again with it; otherwise fix the arguments to match the tool\'s input schema.');
  const output = JSON.parse(result.output) as { message: string; suggestion: string };
  expect(output.message).toContain('did you mean "change"?');
  expect(output.suggestion).toBe(result.error?.suggestion);
  const opposite = await call('manage_account', '{"user":"alice","action":"deactivate"}');
  expect(opposite.error?.message).not.toContain('did you mean');
  expect(opposite.error?.suggestion).toBe("Fix the arguments to match the tool's input schema and call the tool again.");
  expect(raw).toEqual([]);
});

test('null for a field whose schema allows null reaches a side-effecting tool as null, beside a repair', async () => {
  const result = await call('update_subscription', '{"action":"change","seats":"3","note":null,"coupon":null}');
  expect(result.isError).toBe(false);
  expect(result.warnings).toEqual(['repaired /seats: "3" -> 3 (string to number)']);
  expect(received()).toEqual(['{"action":"change","seats":3,"note":null,"coupon":null}']);
});
