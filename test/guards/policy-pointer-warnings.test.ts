import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { parseConfig } from '../../src/config';
import { startupWarnings } from '../../src/guards';
import { startApp } from '../helpers/servers';

// A config author's probe: a misspelt pointer in a policy's `when` (`/amout` for `/amount`) loaded
// silently and its block rule never fired (a 5,000 payment ran); a misspelt `set` (`/currnecy`)
// loaded silently and then refused every call "into ones the schema refuses (must NOT have
// additional properties)", naming neither the property nor the policy. Start-up now warns of both,
// as it does of a misspelt `match:`, and the refusal names the property.

const PAY_SCHEMA = JSON.stringify({ type: 'object', properties: { amount: { type: 'number' }, currency: { type: 'string' } }, required: ['amount'], additionalProperties: false });
const yaml = (policies: string) => `
tools:
  - { name: pay, effect: read_only, builtin: { name: echo }, input_schema: '${PAY_SCHEMA}' }
  - { name: refund, effect: read_only, builtin: { name: echo }, input_schema: '${PAY_SCHEMA}' }
  - { name: open_search, effect: read_only, builtin: { name: echo }, input_schema: '{"type":"object","properties":{"q":{"type":"string"}}}' }
policies:
${policies}`;
const pointerWarnings = (policies: string) => startupWarnings(parseConfig(yaml(policies), 'dispatch.yaml')).filter((w) => 'pointer' in w.fields);

test("a when pointer naming no property of the tools the rule fits is warned of, with the one likely meant", () => {
  expect(pointerWarnings(`  - { name: big-payments, match: pay, when: [{ pointer: /amout, op: ">", value: 1000 }], decide: block, reason: too big }`)).toEqual([
    {
      message: 'policies[0] (big-payments): when[0].pointer "/amout" names the property "amout", which the input_schema of "pay" does not declare (did you mean "/amount"?); as written, the condition never holds, so the block rule never applies to a call of it',
      fields: { policy: 0, at: 'when[0].pointer', pointer: '/amout', tools: ['pay'] },
    },
  ]);
});

test('set and remove pointers too, across every tool a glob fits; a name no near miss of any is listed against a closed schema', () => {
  // An open schema declaring other properties no longer counts as one that may hold it (an SRE's probe below).
  expect(pointerWarnings(`  - { match: "*", decide: modify, set: { /currnecy: EUR }, remove: [/memo] }`).map((w) => w.message)).toEqual([
    'policies[0]: set./currnecy "/currnecy" names the property "currnecy", which the input_schema of any of the 3 tools it fits ("pay", "refund", "open_search") does not declare (did you mean "/currency"?); as written, the modify rule sets a property the schema does not declare: where it allows no other, every call it fits is refused INVALID_ARGUMENTS',
    'policies[0]: remove[0] "/memo" names the property "memo", which the input_schema of any of the 3 tools it fits ("pay", "refund", "open_search") does not declare, which allows no other: "amount", "currency"; as written, the modify rule removes nothing',
  ]);
  expect(pointerWarnings(`  - { match: ["pay", "refund"], decide: modify, set: { /currnecy: EUR }, remove: [/memo] }`).map((w) => w.message)).toEqual([
    'policies[0]: set./currnecy "/currnecy" names the property "currnecy", which the input_schema of any of the 2 tools it fits ("pay", "refund") does not declare (did you mean "/currency"?); as written, the modify rule sets a property the schema does not declare: where it allows no other, every call it fits is refused INVALID_ARGUMENTS',
    'policies[0]: remove[0] "/memo" names the property "memo", which the input_schema of any of the 2 tools it fits ("pay", "refund") does not declare, which allows no other: "amount", "currency"; as written, the modify rule removes nothing',
  ]);
});

test('no warning for a pointer one fitting tool declares, a schema declaring no property or patterned ones may hold, or an entry fitting no config-file tool', () => {
  expect(pointerWarnings(`  - { match: ["pay", "open_search"], when: [{ pointer: /amount, op: ">", value: 1 }], decide: block, reason: r }`)).toEqual([]);
  expect(pointerWarnings(`  - { match: tenant_tool, when: [{ pointer: /amout, op: exists }], decide: block, reason: r }`)).toEqual([]);
  const loose = (schema: string) => startupWarnings(parseConfig(`tools:\n  - { name: t, effect: read_only, builtin: { name: echo }, input_schema: '${schema}' }\npolicies:\n  - { match: t, when: [{ pointer: /anything, op: exists }], decide: block, reason: r }\n`, 'dispatch.yaml')).filter((w) => 'pointer' in w.fields);
  expect(loose('{"type":"object"}')).toEqual([]);
  expect(loose('{"type":"object","properties":{"q":{"type":"string"}},"patternProperties":{"^x-":{}}}')).toEqual([]);
});

// An SRE's probe: against a schema declaring ms and tag (open), `/msx` and `/tga` (too short, or a
// swap, for the near-miss rule of repairs) and `/amount` (declared by no tool) loaded silently,
// and their ask rule let every call run unasked.
test('against an open schema: a short near miss or a swap is named, and any other undeclared name is warned of with what the schema declares', () => {
  const slow = `tools:\n  - { name: slow_write, effect: side_effect, builtin: { name: echo }, input_schema: '{"type":"object","properties":{"ms":{"type":"integer"},"tag":{"type":"string"}}}' }\npolicies:\n`;
  const warned = (pointer: string) => startupWarnings(parseConfig(`${slow}  - { match: slow_write, when: [{ pointer: ${pointer}, op: exists }], decide: ask, reason: r }\n`, 'dispatch.yaml')).filter((w) => 'pointer' in w.fields).map((w) => w.message);
  expect(warned('/msx')).toEqual(['policies[0]: when[0].pointer "/msx" names the property "msx", which the input_schema of "slow_write" does not declare (did you mean "/ms"?); as written, the condition never holds, so the ask rule never applies to a call of it']);
  expect(warned('/tga')).toEqual(['policies[0]: when[0].pointer "/tga" names the property "tga", which the input_schema of "slow_write" does not declare (did you mean "/tag"?); as written, the condition never holds, so the ask rule never applies to a call of it']);
  expect(warned('/amount')).toEqual(['policies[0]: when[0].pointer "/amount" names the property "amount", which the input_schema of "slow_write" does not declare (it declares "ms", "tag"); as written, the condition never holds, so the ask rule never applies to a call of it']);
  expect(warned('/tag')).toEqual([]);
});

test("a modify rule's arguments the schema refuses are refused naming the property", async () => {
  const app = await startApp(yaml(`  - { match: pay, decide: modify, set: { /currnecy: EUR } }`));
  try {
    const [result] = (await app.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 'pay', arguments: '{"amount": 5}' }] })).results;
    expect(result!.error?.kind).toBe(ErrorKind.BLOCKED);
    expect(result!.error?.message).toContain('a policy modified the arguments into ones the schema refuses (invalid arguments: /: unexpected property "currnecy" (the schema allows no other properties; did you mean "currency"?))');
  } finally {
    await app.close();
  }
});

// The same probe: `op: matches, value: "^prod"` loaded silently; matches is a glob, so the ask rule
// never applied and `{"tag": "prod-db"}` ran unasked.
test('a matches value that reads as a regular expression is warned of, a glob is not', () => {
  const warned = (value: string) => startupWarnings(parseConfig(yaml(`  - { name: prod, match: open_search, when: [{ pointer: /q, op: matches, value: ${JSON.stringify(value)} }], decide: ask, reason: r }`), 'dispatch.yaml')).filter((w) => w.fields.at === 'when[0].value');
  for (const value of ['^prod', 'prod$', '\\d+', 'prod.*', 'a|b', '[pP]rod']) expect({ value, warned: warned(value).length }).toEqual({ value, warned: 1 });
  for (const value of ['prod*', '*prod*', 'db-?', 'C++', 'v1.2', 'user@example.com', '(draft)', '50%']) expect({ value, warned: warned(value).length }).toEqual({ value, warned: 0 });
  expect(warned('^prod')[0]!.message).toBe('policies[0] (prod): when[0] matches "^prod", which reads as a regular expression, but matches is a glob (* any run of characters, ? one): as written, it matches only text holding those characters themselves (for "starts with prod", write "prod*")');
});
