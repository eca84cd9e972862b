import { create, type MessageInitShape } from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import { Effect, McpExecutorSchema, ToolSpecSchema, type ToolSpec } from '../../gen/dispatch/v1/tool_pb';
import { SILENT_LOGGER } from '../../src/log';
import { createSchemaCompiler, createToolRegistry, RegistryError } from '../../src/registry';
import { pointerNameProblem } from '../../src/registry/pointer-names';
import { startWorkerApp, type WorkerApp } from '../workers/worker-app';
import { startWorker } from '../workers/worker-harness';

// Found by a user probe: `primary_parameter: /qury` beside an input schema whose only property is
// `query` loaded, and read nothing in any call: loop detection took 11 distinct queries answering
// alike for one operation and ended the turn ABORTED LOOP_DETECTED. A primary_parameter or
// resource_key whose first token names no declared property is refused at registration when it is
// a near miss of one (did you mean) or when the schema allows no other property; an MCP tool's is
// kept with a warning (its schema is its server's), as another replica's is.

type Fields = MessageInitShape<typeof ToolSpecSchema>;
const spec = (fields: Fields): ToolSpec =>
  create(ToolSpecSchema, { name: 't', effect: Effect.READ_ONLY, executor: { case: 'builtin', value: { name: 'echo' } }, ...fields });
const schema = (value: unknown) => JSON.stringify(value);
const CLOSED_QUERY = schema({ type: 'object', properties: { query: { type: 'string' } }, required: ['query'], additionalProperties: false });
const LOOP_EFFECT = 'loop detection would read nothing there and take every call of the tool for the same operation (distinct calls answering alike end the turn LOOP_DETECTED)';
const RESOURCE_EFFECT = 'a parallel turn would read no resource there, so calls on one resource would run at once';

describe('pointerNameProblem', () => {
  test.each([
    ['the probe: /qury for the closed schema of query', { primaryParameter: '/qury', inputSchema: CLOSED_QUERY }, `primary_parameter "/qury" names the property "qury", which input_schema does not declare: did you mean "/query"? As written, ${LOOP_EFFECT}`],
    ['a near miss in an open schema, deeper tokens kept', { primaryParameter: '/adress/city', inputSchema: schema({ type: 'object', properties: { address: { type: 'object' } } }) }, `primary_parameter "/adress/city" names the property "adress", which input_schema does not declare: did you mean "/address/city"? As written, ${LOOP_EFFECT}`],
    ['a resource_key of other case', { resourceKey: '/Path', inputSchema: schema({ type: 'object', properties: { path: { type: 'string' } } }) }, `resource_key "/Path" names the property "Path", which input_schema does not declare: did you mean "/path"? As written, ${RESOURCE_EFFECT}`],
    ['a name far from any, closed by additionalProperties', { resourceKey: '/file', inputSchema: schema({ type: 'object', properties: { path: {}, mode: {} }, additionalProperties: false }) }, `resource_key "/file" names the property "file", which input_schema does not declare and allows no other (additionalProperties or unevaluatedProperties false), so ${RESOURCE_EFFECT}; point it at a property it declares: "path", "mode"`],
    ['closed by unevaluatedProperties across a $ref and allOf', { primaryParameter: '/zzz', inputSchema: schema({ $defs: { base: { properties: { id: {} } } }, type: 'object', allOf: [{ $ref: '#/$defs/base' }, { properties: { q: {} } }], unevaluatedProperties: false }) }, `primary_parameter "/zzz" names the property "zzz", which input_schema does not declare and allows no other (additionalProperties or unevaluatedProperties false), so ${LOOP_EFFECT}; point it at a property it declares: "q", "id"`],
    ['a near miss of a property an allOf member declares', { primaryParameter: '/user_Id', inputSchema: schema({ type: 'object', allOf: [{ properties: { user_id: {} } }] }) }, `primary_parameter "/user_Id" names the property "user_Id", which input_schema does not declare: did you mean "/user_id"? As written, ${LOOP_EFFECT}`],
  ])('%s is refused', (_, fields, refusal) => {
    expect(pointerNameProblem(spec(fields))).toBe(refusal);
  });

  test.each([
    ['a declared property, and a path below it', { primaryParameter: '/query/text', resourceKey: '/query', inputSchema: CLOSED_QUERY }],
    ['a name no property is near, in an open schema', { primaryParameter: '/page', inputSchema: schema({ type: 'object', properties: { query: {} } }) }],
    ['no properties declared', { primaryParameter: '/q', inputSchema: '{"type":"object"}' }],
    ['an empty schema (any object)', { primaryParameter: '/q', inputSchema: '' }],
    ['a near miss a pattern may declare', { primaryParameter: '/qury', inputSchema: schema({ type: 'object', properties: { query: {} }, patternProperties: { '^q': {} } }) }],
    ['a name additionalProperties allows', { primaryParameter: '/extra', inputSchema: schema({ type: 'object', properties: { query: {} }, additionalProperties: { type: 'string' } }) }],
    ['shapes an anyOf chooses between', { primaryParameter: '/b', inputSchema: schema({ type: 'object', properties: { a: {} }, anyOf: [{ properties: { b: {} } }], unevaluatedProperties: false }) }],
    ['a $ref that does not resolve', { primaryParameter: '/zzz', inputSchema: schema({ type: 'object', allOf: [{ $ref: '#/$defs/none' }], properties: { a: {} }, unevaluatedProperties: false }) }],
    ['a property named by an escaped token', { resourceKey: '/a~1b', inputSchema: schema({ type: 'object', properties: { 'a/b': {} }, additionalProperties: false }) }],
    ['no pointer', { inputSchema: CLOSED_QUERY }],
    ['a schema that is no JSON (the compile refuses it)', { primaryParameter: '/q', inputSchema: '{' }],
  ])('%s is taken', (_, fields) => {
    expect(pointerNameProblem(spec(fields))).toBeUndefined();
  });
});

describe('the registry', () => {
  const warned: string[] = [];
  const logger = { ...SILENT_LOGGER, warn: (message: string, fields?: Record<string, unknown>) => void warned.push(`${message}: ${String(fields?.problem)}`) };
  const registry = createToolRegistry(createSchemaCompiler(65_536), () => new Set(['builtin', 'mcp', 'worker']), { logger });
  afterAll(() => registry.close());
  beforeEach(() => warned.splice(0));

  test('refuses the tool of a local registration, on the loop and through the worker thread, naming the tool, key and pointer', async () => {
    const typo = spec({ name: 'search', primaryParameter: '/qury', inputSchema: CLOSED_QUERY });
    const refusal = 'tools[0]: tool "search": primary_parameter "/qury" names the property "qury", which input_schema does not declare: did you mean "/query"?';
    expect(() => registry.register([typo], { tenant: '' })).toThrow(RegistryError);
    expect(() => registry.register([typo], { tenant: 'acme' })).toThrow(refusal);
    await expect(registry.registerAsync([typo], { tenant: 'acme', compileHereUpTo: 0 })).rejects.toThrow(refusal);
    expect(registry.list('acme')).toEqual([]);
  });

  test("keeps an MCP tool's, warning; and another replica's, warning as of any newer rule", () => {
    const mcp = spec({ name: 'files.read', primaryParameter: '/pth', inputSchema: schema({ type: 'object', properties: { path: {} } }), executor: { case: 'mcp', value: create(McpExecutorSchema, { server: 'files', tool: 'read' }) } });
    registry.register([mcp], { tenant: '' });
    expect(registry.lookup('', 'files.read')).toBeDefined();
    expect(warned).toEqual([expect.stringMatching(/^an MCP tool is kept though a pointer of it names no property its schema declares .*: primary_parameter "\/pth" names the property "pth", which input_schema does not declare: did you mean "\/path"\?/)]);
    warned.splice(0);
    registry.applyRemote({ type: 'register', tenant: 'other', specs: [spec({ name: 'remote', resourceKey: '/qury', inputSchema: CLOSED_QUERY })] });
    expect(registry.lookup('other', 'remote')).toBeDefined();
    expect(warned).toEqual([expect.stringMatching(/^a tool from another replica breaks a rule of this version and is kept; .*: resource_key "\/qury" names the property "qury"/)]);
  });
});

describe("a worker's hello", () => {
  let t: WorkerApp;
  beforeAll(async () => {
    t = await startWorkerApp();
  });
  afterAll(() => t.close());

  it('naming such a tool ends INVALID_ARGUMENT with the refusal', async () => {
    const worker = startWorker(t.address, { id: 'w', tools: [{ name: 'lookup', primaryParameter: '/qury', inputSchema: CLOSED_QUERY, executor: { case: 'worker', value: {} } }] });
    // Bounded: a hello taken leaves the stream open, cut at the end.
    const timer = setTimeout(() => worker.disconnect(), 5_000);
    try {
      const status = await worker.ended;
      expect(status.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(status.details).toContain('tool "lookup": primary_parameter "/qury" names the property "qury", which input_schema does not declare: did you mean "/query"?');
    } finally {
      clearTimeout(timer);
    }
  });
});
