import { DispatchMode } from '../../gen/dispatch/v1/dispatch_pb';
import { startApp, type TestDispatch } from '../helpers/servers';

// Every default a lenient tool's arguments get is listed in its warnings (issue 8: "every repair
// is listed"; the closing note: "every repair and applied default"). Validation fills defaults
// wherever Ajv reaches (array items, tuple items, allOf branches, additionalProperties), but only
// those under `properties` chains were listed: `{"lines":[{"sku":"A1"}]}` reached the tool as
// `{"lines":[{"sku":"A1","qty":1}]}` with no warning, in both modes. Found by an audit of issue 8.

let d: TestDispatch;
const line = '{"type":"object","properties":{"sku":{"type":"string"},"qty":{"type":"integer","default":1}},"required":["sku"]}';
beforeAll(async () => {
  d = await startApp(`
tools:
  - name: order
    effect: read_only
    lenient_arguments: true
    input_schema: '{"type":"object","properties":{"lines":{"type":"array","items":${line}},"pair":{"type":"array","prefixItems":[${line}]},"ship":{"allOf":[{"$ref":"#/$defs/ship"}]},"notes":{"type":"object","additionalProperties":{"type":"object","properties":{"lang":{"type":"string","default":"en"}}}}},"$defs":{"ship":{"type":"object","properties":{"speed":{"type":"string","default":"standard"}}}}}'
    builtin: { name: echo }
`);
});
afterAll(async () => {
  await d.close();
});

let session = 0;
const call = async (args: string, mode: DispatchMode) => {
  const reply = await d.dispatch.dispatch({ sessionId: `defaults-${session++}`, mode, calls: [{ id: 'c1', name: 'order', arguments: args }] });
  return reply.results[0]!;
};

describe.each([
  ['sequential', DispatchMode.SEQUENTIAL],
  ['parallel', DispatchMode.PARALLEL],
])('%s', (_mode, mode) => {
  test('a default filled in an array item is listed', async () => {
    const result = await call('{"lines":[{"sku":"A1"},{"sku":"B2","qty":3}]}', mode);
    expect(JSON.parse(result.output)).toEqual({ lines: [{ sku: 'A1', qty: 1 }, { sku: 'B2', qty: 3 }] });
    expect(result.warnings).toEqual(['applied default /lines/0/qty: 1']);
  });

  test('in an item a repair made (a bare object wrapped), after the repair', async () => {
    const result = await call('{"lines":{"sku":"A1"}}', mode);
    expect(JSON.parse(result.output)).toEqual({ lines: [{ sku: 'A1', qty: 1 }] });
    expect(result.warnings).toEqual(['repaired /lines: {"sku":"A1"} -> [{"sku":"A1"}] (bare value wrapped in an array)', 'applied default /lines/0/qty: 1']);
  });

  test('in tuple items, an allOf branch and additionalProperties', async () => {
    const result = await call('{"pair":[{"sku":"A1"}],"ship":{},"notes":{"gift":{}}}', mode);
    expect(JSON.parse(result.output)).toEqual({ pair: [{ sku: 'A1', qty: 1 }], ship: { speed: 'standard' }, notes: { gift: { lang: 'en' } } });
    expect([...result.warnings].sort()).toEqual(['applied default /notes/gift/lang: "en"', 'applied default /pair/0/qty: 1', 'applied default /ship/speed: "standard"']);
  });
});
