// Another replica's tools are kept over the tenant's pattern bound (found in review of ea26148:
// applyRemote and a replica's load refused them, so replicas held different tools for good); the
// tenant over is logged once until it is under, and its registrations here still meet the bound.
import { create } from '@bufbuild/protobuf';
import { Effect, ToolSpecSchema } from '../../gen/dispatch/v1/tool_pb';
import type { Logger } from '../../src/log';
import { createSchemaCompiler, createToolRegistry } from '../../src/registry';
import { MAX_PATTERNS_PER_TENANT, patternsOwned } from '../../src/registry/pattern-pool';

jest.setTimeout(60_000);

const warnings: string[] = [];
const logger: Logger = { debug() {}, info() {}, warn: (m, f) => warnings.push(`${m} ${JSON.stringify(f)}`), error: (m) => warnings.push(m) };
const registry = createToolRegistry(createSchemaCompiler(1 << 20), () => new Set(['http']), { logger });
function patterns(tag: string, count: number): string {
  const props = Array.from({ length: count }, (_, i) => [`p${i}`, { type: 'string', pattern: `^${tag}${i}$` }]);
  return JSON.stringify({ type: 'object', properties: Object.fromEntries(props) });
}
const spec = (name: string, inputSchema: string) =>
  create(ToolSpecSchema, { name, effect: Effect.READ_ONLY, inputSchema, executor: { case: 'http', value: { url: 'http://127.0.0.1:8/x' } } });

test("another replica's tools over the tenant's pattern bound are kept; the tenant is logged over once", () => {
  registry.register([spec('mine', patterns('a', 300))], { tenant: 'team-a' });
  registry.applyRemote({ type: 'register', tenant: 'team-a', specs: [spec('theirs', patterns('b', 300))] });
  expect(registry.list('team-a').map((tool) => tool.name)).toEqual(['mine', 'theirs']);
  expect(patternsOwned('team-a')).toBe(600);
  // Loaded again (a reconnection): still kept, not logged again.
  registry.applyRemote({ type: 'register', tenant: 'team-a', specs: [spec('theirs', patterns('b', 300))] });
  expect(warnings).toEqual([
    `a tenant's tools from other replicas are over its limits here; they are kept (the registering replica decided), and registrations here that leave it over are refused {"tenant":"team-a","schemaBytes":${2 * Buffer.byteLength(patterns('a', 300))},"patterns":600,"maxPatternsPerTenant":${MAX_PATTERNS_PER_TENANT}}`,
  ]);
  // A registration here adding a pattern is refused; one reusing the tenant's is not.
  expect(() => registry.register([spec('more', patterns('c', 1))], { tenant: 'team-a' })).toThrow(`tenant "team-a" would hold 601 distinct patterns`);
  registry.register([spec('same', patterns('a', 10))], { tenant: 'team-a' });
  // Under again, then over again: logged again.
  registry.applyRemote({ type: 'remove', tenant: 'team-a', name: 'theirs' });
  registry.applyRemote({ type: 'register', tenant: 'team-a', specs: [spec('theirs', patterns('d', 201))] });
  expect(warnings).toHaveLength(2);
  expect(patternsOwned('team-a')).toBe(501);
});
