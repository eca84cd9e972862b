// The process's pattern budget: tenants together leave the operator's share, and patterns no
// registered tool holds are freed (re2-wasm's fixed 16 MiB filled after ~10,000 patterns).
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { MAX_DISTINCT_PATTERNS, MAX_PATTERNS_PER_TENANT, OPERATOR_RESERVED_PATTERNS, patternsHeld, patternsOwned } from '../../src/registry/pattern-pool';
import { createSchemaCompiler } from '../../src/registry/schema-compiler';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

jest.setTimeout(120_000);

const compiler = createSchemaCompiler(1 << 20);
function patterns(tag: string, count: number): string {
  const props = Array.from({ length: count }, (_, i) => [`p${i}`, { type: 'string', pattern: `^${tag}${i}$` }]);
  return JSON.stringify({ type: 'object', properties: Object.fromEntries(props) });
}

/** Collects, then lets the finalizers run. */
async function collect(): Promise<void> {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

test('patterns no tool holds are freed: 30,000 distinct patterns registered and removed in turn', async () => {
  for (let round = 0; round < 60; round++) {
    const compiled = compiler.compile(patterns(`r${round}_`, MAX_PATTERNS_PER_TENANT), 'churn');
    expect(compiled.validate({ p0: `r${round}_0` })).toBe(true);
    compiled.release();
    if (round % 5 === 4) await collect();
  }
  await collect();
  expect(patternsOwned('churn')).toBe(0);
  // At most the last round's, which V8 may still hold (the last code compiled); never 30,000.
  expect(patternsHeld()).toBeLessThanOrEqual(MAX_PATTERNS_PER_TENANT);
});

test("tenants together leave the operator's share; the operator's tools get it", async () => {
  await collect();
  // No await from here: no finalizer runs, so the count only grows.
  let room = MAX_DISTINCT_PATTERNS - OPERATOR_RESERVED_PATTERNS - patternsHeld();
  const held = [];
  for (let t = 0; room > 0; t++) {
    const count = Math.min(room, MAX_PATTERNS_PER_TENANT);
    held.push(compiler.compile(patterns(`t${t}_`, count), `tenant-${t}`));
    room -= count;
  }
  expect(() => compiler.compile(patterns('late', 1), 'late')).toThrow(
    `input_schema does not compile: this process already holds ${MAX_DISTINCT_PATTERNS - OPERATOR_RESERVED_PATTERNS} distinct patterns of tenants' tools (the last ${OPERATOR_RESERVED_PATTERNS} of ${MAX_DISTINCT_PATTERNS} are kept for the operator's); use fewer distinct "pattern" keywords`,
  );
  expect(patternsOwned('late')).toBe(0);
  const operator = compiler.compile(patterns('op', 900));
  expect(operator.validate({ p1: 'op1' })).toBe(true);
  for (const compiled of held) compiled.release();
  operator.release();
});
