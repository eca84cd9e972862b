import { conditionHolds, createPreHook, evaluateRules, globMatch, parsePolicies, rulesByTool, removeAtPointer, setAtPointer, type Condition } from '../../src/guards';
import type { HookDecision, PreHookInput } from '../../src/pipeline';
import type { ResolvedTool } from '../../src/registry';
import { parse } from 'yaml';

const rulesOf = (text: string) => parsePolicies(parse(text) as unknown[], 'test.yaml').rules;
const when = (op: Condition['op'], value: unknown, pointer = '/v'): Condition => ({ pointer, op, value });

test('glob: * any run, ? one character, everything else literal, and no blow-up on hostile input', () => {
  expect(globMatch('payments.*', 'payments.charge')).toBe(true);
  expect(globMatch('payments.*', 'paymentsXcharge')).toBe(false);
  expect(globMatch('get_?', 'get_a')).toBe(true);
  expect(globMatch('get_?', 'get_ab')).toBe(false);
  expect(globMatch('*', '')).toBe(true);
  expect(globMatch('a*b*c', 'aXXbYYc')).toBe(true);
  expect(globMatch('a*b*c', 'aXXbYY')).toBe(false);
  const started = performance.now();
  expect(globMatch('*a*a*a*a*a*b', 'a'.repeat(20_000))).toBe(false);
  expect(performance.now() - started).toBeLessThan(1000);
});

test.each<[Condition, unknown, boolean]>([
  [when('>', 1000), { v: 1000 }, false],
  [when('>', 1000), { v: 1000.01 }, true],
  [when('>', 1000), { v: '5000' }, true],
  [when('>', 1000), { v: '5e3' }, true],
  [when('>', 1000), { v: 'lots' }, false],
  // Spellings a tool reads as 5000 (Python's int(), JavaScript's Number()) hold too (found in review).
  [when('>', 1000), { v: '+5000' }, true],
  [when('>', 1000), { v: `${'0'.repeat(70)}5000` }, true],
  [when('>', 1000), { v: `${' '.repeat(5_000)}5000` }, true],
  [when('>', 1000), { v: '5_000' }, true],
  [when('>', 1000), { v: '５０００' }, true],
  [when('>', 1000), { v: '٥٠٠٠' }, true],
  [when('>', 1000), { v: '५०००' }, true],
  [when('>', 1000), { v: '0x1388' }, true],
  [when('>', 1000), { v: 'Infinity' }, true],
  [when('>', 1000), { v: 'inf' }, true],
  [when('<', 0), { v: '-inf' }, true],
  [when('>', 1000), { v: '5000 dollars' }, false],
  [when('>', 1000), { v: '' }, false],
  [when('>', 1000), { v: '5__000' }, false],
  [when('>=', 10), { v: 10 }, true],
  [when('<', 0), { v: -1 }, true],
  [when('<=', 0), { v: 1 }, false],
  [when('>', 1), {}, false],
  [when('=', { a: 1, b: 2 }), { v: { b: 2, a: 1 } }, true],
  [when('=', 1), { v: '1' }, false],
  [when('!=', 'x'), {}, true],
  [when('!=', 'x'), { v: 'x' }, false],
  [when('in', ['USD', 'EUR']), { v: 'EUR' }, true],
  [when('in', ['USD', 'EUR']), { v: 'GBP' }, false],
  [when('exists', true), { v: null }, true],
  [when('exists', false), { v: 0 }, false],
  [when('exists', false), {}, true],
  [when('matches', 'https://internal.*'), { v: 'https://internal.example/x' }, true],
  [when('matches', 'https://internal.*'), { v: 'https://example.com' }, false],
  [when('matches', '*'), { v: 3 }, false],
  [when('=', 'deep', '/a/b~1c/0'), { a: { 'b/c': ['deep'] } }, true],
])('condition %j on %j is %s', (condition, args, expected) => {
  expect(conditionHolds(condition, args)).toBe(expected);
});

test('numeric conditions stay linear on long non-ASCII digit strings (~0.1 s here; quadratic would take minutes)', () => {
  const started = performance.now();
  expect(conditionHolds(when('>', 1000), { v: '٥'.repeat(250_000) })).toBe(true);
  expect(conditionHolds(when('>', 1000), { v: `${'٥'.repeat(250_000)}x` })).toBe(false);
  expect(performance.now() - started).toBeLessThan(1500);
});

test('json edits: set creates parents, appends with -, refuses to cross a scalar, sets __proto__ as a key; remove deletes', () => {
  const doc: Record<string, unknown> = { a: 'text', list: [1] };
  expect(setAtPointer(doc, '/meta/source', 'x')).toBe(true);
  expect(setAtPointer(doc, '/list/-', 2)).toBe(true);
  expect(setAtPointer(doc, '/a/b', 1)).toBe(false);
  // `__proto__` is a key as JSON.parse makes it (own), never the prototype: nothing is polluted.
  expect(setAtPointer(doc, '/__proto__/polluted', 1)).toBe(true);
  expect(Object.getOwnPropertyDescriptor(doc, '__proto__')?.value).toEqual({ polluted: 1 });
  expect(Object.getPrototypeOf(doc)).toBe(Object.prototype);
  removeAtPointer(doc, '/__proto__');
  removeAtPointer(doc, '/list/0');
  removeAtPointer(doc, '/missing/x');
  expect(doc).toEqual({ a: 'text', list: [2], meta: { source: 'x' } });
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
});

test('rules apply in order: modify goes on with the new arguments, the first allow, block or ask ends it', () => {
  const rules = rulesOf(`
- { decide: modify, set: { /amount: 2000 } }
- { match: "pay*", when: [{ pointer: /amount, op: ">", value: 1000 }], decide: block, reason: too much }
- { decide: ask, reason: never reached for pay }
`);
  expect(evaluateRules(rules, 'pay', { amount: 1 })).toEqual({ action: 'block', reason: 'too much', by: 'policies[1]' });
  const args = { amount: 1 };
  expect(evaluateRules(rules, 'other', args)).toEqual({ action: 'ask', reason: 'never reached for pay', args: { amount: 2000 }, modified: true });
  expect(args).toEqual({ amount: 1 });
  expect(evaluateRules(rulesOf('- { decide: allow }\n- { decide: block, reason: x }'), 't', {})).toMatchObject({ action: 'allow', modified: false });
  expect(evaluateRules(rulesOf('- { decide: modify, set: { /a/b: 1 } }'), 't', { a: 5 })).toEqual({ action: 'block', reason: 'policy policies[0] could not set /a/b in the arguments', by: 'policies[0]' });
});

test('the pre-tool stage: rules, then code hooks, then the endpoint; a block wins, an ask keeps the modified arguments', async () => {
  const tool = { name: 'pay' } as ResolvedTool;
  const input = { tenant: 't', sessionId: 's', tool, args: { amount: 1 }, attempt: 1, signal: new AbortController().signal } as PreHookInput;
  const asked: unknown[] = [];
  const hook = createPreHook({
    rules: rulesOf('- { decide: modify, set: { /currency: EUR } }'),
    hooks: [async ({ args }) => ({ action: 'ask', reason: 'hook wants a human', arguments: { ...(args as object), checked: true } })],
    endpoint: {
      policy: { url: 'http://unused', match: ['*'], timeoutMs: 1, failOpen: false, headers: {} },
      ask: async (q) => (asked.push(q.args), { action: 'modify', arguments: { ...(q.args as object), capped: true }, reason: 'capped' }),
    },
  });
  expect(await hook(input)).toEqual({ action: 'ask', reason: 'hook wants a human', arguments: { amount: 1, currency: 'EUR', checked: true, capped: true } });
  expect(asked).toEqual([{ amount: 1, currency: 'EUR', checked: true }]);
  const blocking = createPreHook({ rules: [], hooks: [async () => ({ action: 'block', reason: 'no' })], endpoint: { policy: { url: 'x', match: ['*'], timeoutMs: 1, failOpen: false, headers: {} }, ask: async () => { throw new Error('must not be asked'); } } });
  expect(await blocking(input)).toEqual({ action: 'block', reason: 'no', by: 'hook' });
  expect(await createPreHook({ rules: [] })(input)).toEqual({ action: 'allow' });
  const broken = createPreHook({ rules: [], hooks: [async () => { throw new Error('hook bug'); }] });
  expect(await broken(input)).toEqual({ action: 'block', reason: 'a pre-tool hook failed (hook bug), so the call was refused', by: 'hook' });
});

test('every hook sees the turn’s signal, after a modification too, and nothing reads it unless a hook does', async () => {
  const tool = { name: 'pay' } as ResolvedTool;
  const signal = new AbortController().signal;
  let reads = 0;
  const input = { tenant: 't', sessionId: 's', tool, args: { amount: 1 }, attempt: 1, get signal() { reads++; return signal; } } as PreHookInput;
  const seen: Array<{ args: unknown; signal: AbortSignal }> = [];
  const watcher = async (i: PreHookInput): Promise<HookDecision> => (seen.push({ args: i.args, signal: i.signal }), { action: 'allow' });
  await createPreHook({ rules: rulesOf('- { decide: modify, set: { /currency: EUR } }'), hooks: [async () => ({ action: 'allow' })] })(input);
  expect(reads).toBe(0);
  await createPreHook({ rules: rulesOf('- { decide: modify, set: { /currency: EUR } }'), hooks: [watcher] })(input);
  await createPreHook({ rules: [], hooks: [watcher] })(input);
  expect(seen).toEqual([{ args: { amount: 1, currency: 'EUR' }, signal }, { args: { amount: 1 }, signal }]);
  expect(reads).toBe(2);
});

test("rulesByTool keeps, per tool name, the rules whose globs match it, in their order", () => {
  const rules = [{ match: ['pay*'], n: 1 }, { match: ['crm_*'], n: 2 }, { match: ['*'], n: 3 }, { match: ['payments.charge', 'x'], n: 4 }];
  const of = rulesByTool(rules);
  expect(of('payments.charge').map((r) => r.n)).toEqual([1, 3, 4]);
  expect(of('crm_lookup').map((r) => r.n)).toEqual([2, 3]);
  expect(of('payments.charge')).toBe(of('payments.charge'));
  expect(rulesByTool([{ match: ['a*'] }])('b')).toEqual([]);
});

test('rules for other tools do not change a decision: the first matching rule of the tool still decides', () => {
  const rules = rulesOf(`
- { match: [crm_*], decide: block, reason: crm is off }
- { match: [echo], decide: modify, set: { /loud: true } }
- { match: [other], decide: block, reason: not echo }
- { match: ["ec*"], decide: ask, reason: check it }
`);
  const decide = createPreHook({ rules });
  const call = (name: string) => decide({ tenant: 't', sessionId: 's', tool: { name } as ResolvedTool, args: { text: 'hi' }, attempt: 1, signal: new AbortController().signal } as PreHookInput);
  expect(call('echo')).toEqual({ action: 'ask', reason: 'check it', arguments: { text: 'hi', loud: true } });
  expect(call('crm_x')).toEqual({ action: 'block', reason: 'crm is off', by: 'policies[0]' });
  expect(call('nothing')).toEqual({ action: 'allow' });
});
