// Replacing a tool with changed patterns: the replaced tools' patterns that only they hold do not
// count for the tenant while the replacement compiles (found in review of ea26148: a tenant's
// 300-pattern tool could not be replaced by 300 other patterns, refused 'would hold 501 distinct
// patterns' where it would hold 300).
import { create } from '@bufbuild/protobuf';
import { Effect, ToolSpecSchema } from '../../gen/dispatch/v1/tool_pb';
import { createSchemaCompiler, createToolRegistry, RegistryError } from '../../src/registry';
import { MAX_PATTERNS_PER_TENANT, patternsOwned } from '../../src/registry/pattern-pool';

jest.setTimeout(60_000);

const registry = createToolRegistry(createSchemaCompiler(1 << 20), () => new Set(['http']));
/** A schema of `count` distinct patterns, `^<tag>N$` (from `from`). */
function patterns(tag: string, count: number, from = 0): string {
  const props = Array.from({ length: count }, (_, i) => [`p${i}`, { type: 'string', pattern: `^${tag}${from + i}$` }]);
  return JSON.stringify({ type: 'object', properties: Object.fromEntries(props) });
}
const spec = (name: string, inputSchema: string) =>
  create(ToolSpecSchema, { name, effect: Effect.READ_ONLY, inputSchema, executor: { case: 'http', value: { url: 'http://127.0.0.1:8/x' } } });

test('a 300-pattern tool is replaced by 300 other patterns; the tenant then holds 300', () => {
  registry.register([spec('lookup', patterns('v1_', 300))], { tenant: 'team-a' });
  expect(patternsOwned('team-a')).toBe(300);
  const [tool] = registry.register([spec('lookup', patterns('v2_', 300))], { tenant: 'team-a', replace: true });
  expect(tool!.validate({ p0: 'v2_0' })).toBe(true);
  expect(patternsOwned('team-a')).toBe(300);
  // Half the old, half new: 300 still.
  registry.register([spec('lookup', patterns('v2_', 300, 150))], { tenant: 'team-a', replace: true });
  expect(patternsOwned('team-a')).toBe(300);
  registry.remove('team-a', 'lookup');
  expect(patternsOwned('team-a')).toBe(0);
});

test("a pattern another of the tenant's tools also holds still counts; over the bound the count stated is true", () => {
  registry.register([spec('a', patterns('s', 300)), spec('b', patterns('s', 100))], { tenant: 'team-b' });
  expect(patternsOwned('team-b')).toBe(300);
  // b's 100 are a's too: replacing b by 200 new patterns holds 500, the bound.
  registry.register([spec('b', patterns('n', 200))], { tenant: 'team-b', replace: true });
  expect(patternsOwned('team-b')).toBe(500);
  // Replacing b by 201 new ones would hold 501: the refusal says so, and nothing changes.
  let refused: unknown;
  try {
    registry.register([spec('b', patterns('m', 201))], { tenant: 'team-b', replace: true });
  } catch (error) {
    refused = error;
  }
  expect(refused).toBeInstanceOf(RegistryError);
  expect((refused as Error).message).toBe(
    `tools[0] ("b"): input_schema does not compile: tenant "team-b" would hold ${MAX_PATTERNS_PER_TENANT + 1} distinct patterns, over the limit of ${MAX_PATTERNS_PER_TENANT} per tenant; use fewer distinct "pattern" keywords, or remove tools it no longer uses`,
  );
  expect(patternsOwned('team-b')).toBe(500);
  // Both replaced in one request: only what the new ones hold counts.
  registry.register([spec('a', patterns('x', 250)), spec('b', patterns('y', 250))], { tenant: 'team-b', replace: true });
  expect(patternsOwned('team-b')).toBe(500);
});
