import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startDispatch, type TestDispatch } from '../helpers/servers';

// `sleep` refuses a wait longer than Node's longest timer (2^31 - 1 ms), which Node would end
// after 1 ms with a TimeoutOverflowWarning on stderr; the example config's sleep accepts only
// waits that end within its timeout.

let d: TestDispatch;
beforeAll(async () => {
  d = await startDispatch(`tools:\n  - name: sleep\n    effect: read_only\n    timeout_ms: 2000\n    builtin: { name: sleep }\n`);
});
afterAll(async () => {
  await d.close();
});
const sleep = async (args: string) => (await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 'sleep', arguments: args }] })).results[0]!;

test.each([['2147483648', 2147483648], ['1e12', 1e12], ['"99999999999"', 99999999999]])('sleep with ms %s is refused as INVALID_ARGUMENTS, once, with no warning', async (ms, shown) => {
  const warnings: Error[] = [];
  const onWarning = (warning: Error) => warnings.push(warning);
  process.on('warning', onWarning);
  try {
    const result = await sleep(`{"ms": ${ms}}`);
    expect(result.isError).toBe(true);
    expect(result.error?.kind).toBe(ErrorKind.INVALID_ARGUMENTS);
    expect(result.error?.message).toBe(`sleep: ms must be at most 2147483647, got ${shown}`);
    expect(result.attempts).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings.filter((w) => w.name === 'TimeoutOverflowWarning')).toEqual([]);
  } finally {
    process.off('warning', onWarning);
  }
});

test('sleep still waits what it is asked, and treats a negative or missing ms as 0', async () => {
  const started = Date.now();
  const result = await sleep('{"ms": 150}');
  expect(result.isError).toBe(false);
  expect(Date.now() - started).toBeGreaterThanOrEqual(145);
  expect((await sleep('{"ms": -5}')).output).toBe('{"ms":-5}');
  expect((await sleep('{}')).isError).toBe(false);
});

test("the example config's sleep accepts only waits that end within its timeout", () => {
  const { tools } = parse(readFileSync(join(__dirname, '../../examples/tools.yaml'), 'utf8')) as { tools: { name: string; timeout_ms: number; input_schema: string }[] };
  const tool = tools.find((t) => t.name === 'sleep')!;
  const maximum = (JSON.parse(tool.input_schema) as { properties: { ms: { maximum: number } } }).properties.ms.maximum;
  expect(maximum).toBeLessThan(tool.timeout_ms);
});
