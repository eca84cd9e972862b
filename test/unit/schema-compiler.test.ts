import { RE2 } from 're2-wasm';
import { leasePatterns } from '../../src/registry/pattern-pool';
import { createSchemaCompiler } from '../../src/registry/schema-compiler';

// Tool schemas are compiled again and again over a process's life (a tool re-registered, the
// shared tools reloaded at each Redis reconnection). re2-wasm's memory is fixed and an RE2 object's
// is never freed: each compile of a pattern took some for good, and after ~13,500 compiles of a
// one-pattern schema every schema with a pattern failed to compile.

// Each RE2 takes re2-wasm memory until its wrapper is deleted: `live` counts those not yet deleted.
jest.mock('re2-wasm', () => {
  const actual = jest.requireActual<typeof import('re2-wasm')>('re2-wasm');
  class CountedRE2 extends actual.RE2 {
    static live = 0;
    constructor(pattern: string, flags?: string) {
      super(pattern, flags);
      CountedRE2.live++;
      const wrapper = (this as unknown as { wrapper: { delete(): void } }).wrapper;
      const free = wrapper.delete.bind(wrapper);
      wrapper.delete = () => {
        CountedRE2.live--;
        free();
      };
    }
  }
  return { ...actual, RE2: CountedRE2 };
});
const liveRE2s = () => (RE2 as unknown as { live: number }).live;

test('compiling the same patterns over and over takes no more memory: 500 compiles, one RE2, then still valid', () => {
  const compiler = createSchemaCompiler(1 << 20);
  const text = JSON.stringify({ type: 'object', properties: { sku: { type: 'string', pattern: '^[A-Z]{3}-[0-9]+$' } } });
  const before = liveRE2s();
  for (let i = 0; i < 500; i++) compiler.compile(text);
  const { validate } = compiler.compile(text);
  // One RE2 for the pattern, whatever the number of compiles (each used to take one for good).
  expect(liveRE2s() - before).toBe(1);
  expect(validate({ sku: 'ABC-12' })).toBe(true);
  expect(validate({ sku: 'abc' })).toBe(false);
});

test('distinct patterns are bounded per process, with a clear error past the bound', () => {
  const compiler = createSchemaCompiler(1 << 20);
  // 4,949 of the process's 5,000 taken directly (an Ajv compile per pattern took 25 s); with the
  // previous test's pattern, 50 are left for compiles.
  const filler = leasePatterns('');
  for (let i = 0; i < 4_949; i++) filler.take(`^f${i}$`, 'u');
  filler.commit();
  const schema = (i: number) => JSON.stringify({ type: 'object', properties: { code: { type: 'string', pattern: `^c${i}$` } } });
  let compiled = 0;
  let refusal: Error | undefined;
  for (let i = 0; i < 1_000 && !refusal; i++) {
    try {
      compiler.compile(schema(i));
      compiled++;
    } catch (error) {
      refusal = error as Error;
    }
  }
  // The 5,000 include the previous test's pattern (the operator's tools, owner "", may take them
  // all) but none of the meta-schema's.
  expect(compiled).toBe(50);
  expect(refusal?.message).toBe('input_schema does not compile: this process already holds 5000 distinct patterns; use fewer distinct "pattern" keywords');
  // Patterns it holds still compile.
  expect(() => compiler.compile(schema(7))).not.toThrow();
});
