import { create, type MessageInitShape } from '@bufbuild/protobuf';
import { Effect, HttpExecutorSchema, RetryPolicySchema, ToolSpecSchema, type ToolSpec } from '../../gen/dispatch/v1/tool_pb';
import { SILENT_LOGGER } from '../../src/log';
import { createSchemaCompiler, createToolRegistry, RegistryError } from '../../src/registry';

// The rules added for tool files (max_attempts over 5, initial over max backoff, a fallback to
// itself, a bad port, an input schema that takes no object or misspells a keyword) refuse a
// registration here. Another replica's tool (from Redis: stored by an older version) is kept and
// logged, as one past a field's bound is: refused, it vanished on every upgraded replica while the
// older ones served it, and RemoveTool could not reach it.

type Fields = MessageInitShape<typeof ToolSpecSchema>;
const spec = (name: string, fields: Fields): ToolSpec =>
  create(ToolSpecSchema, { name, effect: Effect.READ_ONLY, inputSchema: '{"type":"object"}', executor: { case: 'builtin', value: { name: 'echo' } }, ...fields });

const BROKEN: readonly [string, Fields, string][] = [
  ['attempts', { retry: create(RetryPolicySchema, { maxAttempts: 10 }) }, 'retry.max_attempts is 10, over the limit of 5'],
  ['itself', { fallbackTool: 'itself' }, 'fallback_tool names the tool itself'],
  ['smtp', { executor: { case: 'http', value: create(HttpExecutorSchema, { url: 'http://127.0.0.1:25/' }) } }, "http.url's port 25"],
];
const SCHEMAS: readonly [string, string, string][] = [
  ['text', '{"type":"string"}', 'input_schema\'s type "string" does not allow one'],
  ['typo', `{"type":"object","requird":["a"],"description":"${'d'.repeat(5000)}"}`, 'input_schema\'s key "requird" at #/requird'],
];

test("another replica's tool breaking a newer rule is kept and logged; registered here, it is refused", async () => {
  const warned: string[] = [];
  const logger = { ...SILENT_LOGGER, warn: (message: string, fields?: Record<string, unknown>) => void warned.push(`${message}: ${String(fields?.problem)}`) };
  const compiler = createSchemaCompiler(65_536);
  const registry = createToolRegistry(compiler, () => new Set(['builtin', 'http']), { logger });
  try {
    const specs = [...BROKEN.map(([name, fields]) => spec(name, fields)), ...SCHEMAS.map(([name, inputSchema]) => spec(name, { inputSchema }))];
    registry.applyRemote({ type: 'register', tenant: 't', specs: specs.slice(0, 2) });
    // The rest compiled in the worker thread (the 5 KB schema) or on the loop.
    await registry.applyRemoteAsync({ type: 'register', tenant: 't', specs: specs.slice(2) });
    expect(registry.list('t').map((tool) => tool.name).sort()).toEqual(['attempts', 'itself', 'smtp', 'text', 'typo']);
    expect(warned).toEqual(BROKEN.map(([, , problem]) => expect.stringMatching(new RegExp(`^a tool from another replica breaks a rule of this version and is kept; register it again as the problem says: ${problem.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`))));
    for (const [i, one] of specs.entries()) {
      const problem = [...BROKEN, ...SCHEMAS][i]![2];
      expect(() => registry.register([one], { tenant: 'u' })).toThrow(RegistryError);
      expect(() => registry.register([one], { tenant: 'u' })).toThrow(problem);
      await expect(registry.registerAsync([one], { tenant: 'u' })).rejects.toThrow(problem);
    }
    expect(registry.list('u')).toEqual([]);
  } finally {
    await registry.close();
  }
});
