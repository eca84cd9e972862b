import { uniqueIndexes } from '../../src/registry/unique-items';
import { slowerThanAsync } from '../helpers/cpu-time';
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

/** Calls upsert_rows once; gives the result. */
async function call(args: string): Promise<{ isError: boolean; output: string }> {
  const [result] = (await app.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c1', name: 'upsert_rows', arguments: args }] }, bearer(B.token))).results;
  return { isError: result!.isError, output: result!.output };
}

/**
 * Whether a call with `args(size)` spent too much of the process's CPU (client and server): past
 * 1,500 ms, 8x or more the same call with a quarter of the size (a linear check takes 4x and the
 * call's own cost less; the quadratic one 16x). Its result is kept in `last`.
 */
async function tooSlow(args: (size: number) => string): Promise<number | undefined> {
  return slowerThanAsync(async () => (last = await call(args(1024 * 1024))), () => call(args(256 * 1024)), 8, 1_500);
}
let last: { isError: boolean; output: string } | undefined;

// Bounded by CPU, not by the event loop's stall in wall time: with five busy loops beside the
// suite, the stall of a linear check reached 2.2 s (the process waited for a core). A stall holds no
// more CPU than the whole call spent; the quadratic check took 23.8 s of CPU.
test('1 MiB of distinct rows, or of untyped numbers, is checked in well under a second of CPU, and so of event loop', async () => {
  const rows = (size: number): string => {
    const list: object[] = [];
    for (let i = 0, length = 10; length < size - 40; i++, length += JSON.stringify({ id: i }).length + 1) list.push({ id: i });
    return JSON.stringify({ rows: list });
  };
  expect(rows(1024 * 1024).length).toBeGreaterThan(1_000_000);
  expect(await tooSlow(rows)).toBeUndefined();
  expect(last!.isError).toBe(false);
  // 150,000 numbers at a MiB (~1 MB of JSON).
  const numbers = (size: number): string => JSON.stringify({ any: Array.from({ length: Math.round((150_000 * size) / (1024 * 1024)) }, (_, i) => i) });
  expect(await tooSlow(numbers)).toBeUndefined();
  expect(last!.isError).toBe(false);
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
