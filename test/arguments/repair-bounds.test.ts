import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { MAX_REPAIRS } from '../../src/arguments/repair';
import { MAX_SYNTAX_REPAIR_CHARS } from '../../src/arguments/prepare-arguments';
import { startApp } from '../helpers/servers';

// A security probe: a lenient tool's repairs ran on the event loop every tenant shares, unbounded
// but by max_argument_bytes: a turn of three ~960 KB calls of `{'a': ['1', '1', ...]}` held it
// ~6 s (another tenant's trivial calls waited as long), one call's 240,000 "1" -> 1 repairs took
// ~1 s, its syntax repair alone 655 ms. Now the syntax of text past 65,536 characters is not
// repaired, and a call needing more than 10,000 value repairs gets none: both refused, saying why.

let d: Awaited<ReturnType<typeof startApp>>;
beforeAll(async () => {
  d = await startApp(`
tools:
  - { name: nums, effect: read_only, lenient_arguments: true, skip_memoize: true, input_schema: '{"type":"object","properties":{"a":{"type":"array","items":{"type":"integer"}},"pad":{"type":"string"}}}', builtin: { name: echo } }
`);
});
afterAll(() => d.close());

let n = 0;
const call = async (args: string) => (await d.dispatch.dispatch({ sessionId: `s${++n}`, calls: [{ id: `c${n}`, name: 'nums', arguments: args }] })).results[0]!;
const strings = (count: number) => JSON.stringify({ a: Array.from({ length: count }, () => '1') });

test(`${MAX_REPAIRS} values are repaired, one more and none is: the call is refused, saying why`, async () => {
  const within = await call(strings(MAX_REPAIRS));
  expect(within.isError).toBe(false);
  expect(within.warnings.filter((w) => w.startsWith('repaired /a/'))).toHaveLength(MAX_REPAIRS);
  const past = await call(strings(MAX_REPAIRS + 1));
  expect(past.error).toMatchObject({ kind: ErrorKind.INVALID_ARGUMENTS, message: expect.stringContaining(`more than ${MAX_REPAIRS} values would need repair: none was repaired`) });
});

test("a megabyte of values needing repair is refused without repairing them, and another call's answer does not wait a second for it", async () => {
  const big = strings(240_000);
  const started = performance.now();
  const [result, other] = await Promise.all([call(big), new Promise((r) => setTimeout(r, 5)).then(() => call('{"a":[1]}').then(() => performance.now() - started))]);
  const took = performance.now() - started;
  process.stdout.write(`240,000 values to repair: refused in ${took.toFixed(0)} ms; a call sent beside it answered after ${(other as number).toFixed(0)} ms\n`);
  expect(result.error?.kind).toBe(ErrorKind.INVALID_ARGUMENTS);
  expect(result.error?.message).toContain('would need repair');
});

test(`text past ${MAX_SYNTAX_REPAIR_CHARS} characters is not read past JSON; within it, it is`, async () => {
  const pad = (chars: number) => `{'a': [1], 'pad': '${'x'.repeat(chars)}'}`;
  const within = await call(pad(MAX_SYNTAX_REPAIR_CHARS - 100));
  expect(within.isError).toBe(false);
  expect(within.warnings[0]).toContain("repaired the arguments' syntax");
  const past = await call(pad(MAX_SYNTAX_REPAIR_CHARS));
  expect(past.error).toMatchObject({ kind: ErrorKind.INVALID_ARGUMENTS, message: expect.stringContaining(`past ${MAX_SYNTAX_REPAIR_CHARS} characters their syntax is not repaired`) });
});
