// A modify rule (`decide: modify`) sets and removes arguments by JSON pointer. A pointer through or
// to a key named `__proto__` was refused outright ("policy ... could not set /__proto__ in the
// arguments", the call BLOCKED), where any other name was set: the edit guarded the assignment,
// which would have set the object's prototype, by refusing the name. It is now defined as an own
// key, as JSON.parse reads it in the model's arguments. The real server on port 0; `weather` is
// the ordinary name the others must behave like.
import { startApp } from '../helpers/servers';

const NAMES = ['weather', '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'];

let d: Awaited<ReturnType<typeof startApp>>;
beforeAll(async () => {
  const tools = NAMES.map((n) => `  - { name: "set_${n}", effect: read_only, input_schema: '{"type":"object"}', builtin: { name: echo } }\n`).join('');
  const rules = NAMES.map((n) => `  - { name: "p_${n}", match: "set_${n}", decide: modify, set: { "/${n}": 1, "/o/${n}/deep": 2 }, remove: ["/gone/${n}"] }\n`).join('');
  d = await startApp(`tools:\n${tools}policies:\n${rules}`);
});
afterAll(() => d.close());

test.each(NAMES)('a modify rule sets /%s, creates a parent of that name and removes one, as for any name', async (name) => {
  const sent = `{"a": 0, "o": {"${name}": {"kept": true}}, "gone": {"${name}": 3, "stays": 4}}`;
  const { results } = await d.dispatch.dispatch({ sessionId: `modify-${name}`, calls: [{ id: 'c1', name: `set_${name}`, arguments: sent }] });
  const result = results[0]!;
  expect(result.error?.message).toBeUndefined();
  expect(result.output).toBe(`{"a":0,"o":{"${name}":{"kept":true,"deep":2}},"gone":{"stays":4},"${name}":1}`);
  expect(Object.getPrototypeOf(JSON.parse(result.output))).toBe(Object.prototype);
});

test('a parent created under a new key named __proto__ is a key of the arguments, not their prototype', async () => {
  const { results } = await d.dispatch.dispatch({ sessionId: 'modify-created', calls: [{ id: 'c1', name: 'set___proto__', arguments: '{"a": 0}' }] });
  expect(results[0]!.output).toBe('{"a":0,"__proto__":1,"o":{"__proto__":{"deep":2}}}');
  expect(({} as Record<string, unknown>).deep).toBeUndefined();
});
