import { uniqueIndexes } from '../../src/registry/unique-items';
import { cpuMsSince } from '../helpers/cpu-time';
import { authYaml, bearer, startAuthApp, type AuthApp, type TestToken } from './support/auth-app';

// uniqueItems was quadratic in Ajv for items that are objects, arrays or untyped (found in
// review): a dispatch-only tenant's 58,900-byte call to an operator's tool with
// rows: {type: array, uniqueItems: true, items: {type: object}} held the event loop 23.8 s.
// It is now checked in one pass over the items' canonical JSON.

const B: TestToken = { token: 'tenant-b-token', tenant: 'team-b', scopes: ['dispatch'] };
let app: AuthApp;
beforeAll(async () => {
  app = await startAuthApp(`${authYaml([B])}tools:
  - name: upsert_rows
    effect: read_only
    builtin: { name: echo }
    input_schema: { type: object, properties: { rows: { type: array, uniqueItems: true, items: { type: object, properties: { id: { type: integer } } } }, any: { type: array, uniqueItems: true } } }
`);
});
afterAll(() => app.close());

/** Calls upsert_rows once; gives the result and the CPU the process spent on the call (client and server). */
async function call(args: string): Promise<{ isError: boolean; output: string; cpuMs: number }> {
  const cpu = process.cpuUsage();
  const [result] = (await app.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c1', name: 'upsert_rows', arguments: args }] }, bearer(B.token))).results;
  return { isError: result!.isError, output: result!.output, cpuMs: cpuMsSince(cpu) };
}

// Bounded by CPU, not by the event loop's stall in wall time: with five busy loops beside the
// suite, the stall of a linear check reached 2.2 s (the process waited for a core). A stall holds no
// more CPU than the whole call spent; the quadratic check took 23.8 s of CPU.
test('1 MiB of distinct rows, or of untyped numbers, is checked in well under a second of CPU, and so of event loop', async () => {
  const rows: object[] = [];
  for (let i = 0, length = 10; length < 1024 * 1024 - 40; i++, length += JSON.stringify({ id: i }).length + 1) rows.push({ id: i });
  const args = JSON.stringify({ rows });
  expect(args.length).toBeGreaterThan(1_000_000);
  const objects = await call(args);
  expect(objects.isError).toBe(false);
  expect(objects.cpuMs).toBeLessThan(1_500);
  const numbers = JSON.stringify({ any: Array.from({ length: 150_000 }, (_, i) => i) });
  const untyped = await call(numbers);
  expect(untyped.isError).toBe(false);
  expect(untyped.cpuMs).toBeLessThan(1_500);
}, 120_000);

test('duplicates are still refused, with Ajv\'s message; object key order does not make items differ', async () => {
  const duplicate = await call(JSON.stringify({ rows: [{ id: 1, x: 'a' }, { id: 2 }, { x: 'a', id: 1 }] }));
  expect(duplicate.isError).toBe(true);
  expect(JSON.parse(duplicate.output)).toMatchObject({
    kind: 'INVALID_ARGUMENTS',
    message: 'invalid arguments: /rows: got [{"id":1,"x":"a"},{"id":2},{"x":"a","id":1}] (array); must NOT have duplicate items (items ## 0 and 2 are identical); expected {"type":"array","uniqueItems":true,"items":{"type":"object","properties":{"id":{"type":"integer"}}}}; the tool was not executed',
  });
  const distinct = await call(JSON.stringify({ any: [1, '1', [1], { a: 1 }, { a: '1' }, null, 'null', true, 'true', [], {}] }));
  expect(distinct.isError).toBe(false);
});

test('uniqueIndexes finds the first repeat and its earlier twin, at any depth', () => {
  expect(uniqueIndexes([])).toBeUndefined();
  expect(uniqueIndexes([{ a: [1, { b: 2, c: 3 }] }, 0, { a: [1, { c: 3, b: 2 }] }])).toEqual({ i: 2, j: 0 });
  expect(uniqueIndexes([[1, 2], [2, 1], 'x', 'x'])).toEqual({ i: 3, j: 2 });
  expect(uniqueIndexes([1, 1.0])).toEqual({ i: 1, j: 0 });
  expect(uniqueIndexes([{ a: 1 }, { a: 1, b: 2 }])).toBeUndefined();
});
