import { createSchemaCompiler } from '../../src/registry/schema-compiler';

// Tool schemas are compiled again and again over a process's life (a tool re-registered, the
// shared tools reloaded at each Redis reconnection). re2-wasm's memory is fixed and an RE2 object's
// is never freed: each compile of a pattern took some for good, and after ~13,500 compiles of a
// one-pattern schema every schema with a pattern failed to compile.

jest.setTimeout(60_000);

test('compiling the same patterns over and over takes no more memory: 15,000 compiles, then still valid', () => {
  const compiler = createSchemaCompiler(1 << 20);
  const text = JSON.stringify({ type: 'object', properties: { sku: { type: 'string', pattern: '^[A-Z]{3}-[0-9]+$' } } });
  for (let i = 0; i < 15_000; i++) compiler.compile(text);
  const { validate } = compiler.compile(text);
  expect(validate({ sku: 'ABC-12' })).toBe(true);
  expect(validate({ sku: 'abc' })).toBe(false);
});

test('distinct patterns are bounded per process, with a clear error past the bound', () => {
  const compiler = createSchemaCompiler(1 << 20);
  const schema = (i: number) => JSON.stringify({ type: 'object', properties: { code: { type: 'string', pattern: `^c${i}$` } } });
  let compiled = 0;
  let refusal: Error | undefined;
  for (let i = 0; i < 6_000 && !refusal; i++) {
    try {
      compiler.compile(schema(i));
      compiled++;
    } catch (error) {
      refusal = error as Error;
    }
  }
  // The 5,000 include the previous test's pattern (the operator's tools, owner "", may take them all).
  expect(compiled).toBe(4_999);
  expect(refusal?.message).toBe('input_schema does not compile: this process already holds 5000 distinct patterns; use fewer distinct "pattern" keywords');
  // Patterns it holds still compile.
  expect(() => compiler.compile(schema(7))).not.toThrow();
});
