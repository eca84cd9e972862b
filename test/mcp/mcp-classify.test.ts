import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { classifyMcpError, effectOf, importTools, inputSchemaText, noteDropped, parseMcpServers, resultText } from '../../src/executors/mcp';
import { createSchemaCompiler, createToolRegistry } from '../../src/registry';

const classify = (error: unknown) => {
  const { error: e, broken } = classifyMcpError(error, 'files', 'http://127.0.0.1:9/mcp');
  return { kind: ErrorKind[e.kind], phase: e.phase, recoverable: e.recoverable, broken };
};
const refused = Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
const reset = Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) });

describe('MCP failures by phase', () => {
  it.each([
    ['a lost connection', new McpError(ErrorCode.ConnectionClosed, 'Connection closed'), { kind: 'UNAVAILABLE', phase: 'during', recoverable: true, broken: true }],
    ['an SDK timeout', new McpError(ErrorCode.RequestTimeout, 'Request timed out'), { kind: 'TIMEOUT', phase: 'during', recoverable: true, broken: false }],
    ['invalid params answered by the server', new McpError(ErrorCode.InvalidParams, 'bad'), { kind: 'TOOL_ERROR', phase: 'after', recoverable: false, broken: false }],
    ['an internal error answered by the server', new McpError(ErrorCode.InternalError, 'oops'), { kind: 'TOOL_ERROR', phase: 'after', recoverable: true, broken: false }],
    ['an unknown session (HTTP 404)', new StreamableHTTPError(404, 'Session not found'), { kind: 'UNAVAILABLE', phase: 'before', recoverable: true, broken: true }],
    ['an HTTP 503', new StreamableHTTPError(503, 'busy'), { kind: 'UNAVAILABLE', phase: 'during', recoverable: true, broken: true }],
    ['an HTTP 401', new StreamableHTTPError(401, 'who'), { kind: 'UNAVAILABLE', phase: 'before', recoverable: false, broken: false }],
    ['an answer the SDK could not read (-1: a 200 of the wrong content type)', new StreamableHTTPError(-1, 'Unexpected content type: text/plain'), { kind: 'UNAVAILABLE', phase: 'during', recoverable: true, broken: true }],
    ['a refused connection', refused, { kind: 'UNAVAILABLE', phase: 'before', recoverable: true, broken: true }],
    ['a reset connection', reset, { kind: 'UNAVAILABLE', phase: 'during', recoverable: true, broken: true }],
    ['the SDK not connected', new Error('Not connected'), { kind: 'UNAVAILABLE', phase: 'before', recoverable: true, broken: true }],
    ['anything else', new Error('weird'), { kind: 'UNEXPECTED', phase: 'after', recoverable: false, broken: false }],
  ])('classifies %s', (_what, error, expected) => {
    expect(classify(error)).toEqual(expected);
  });
});

describe('a call lost on a connection dispatch dropped', () => {
  const lost = new McpError(ErrorCode.ConnectionClosed, 'Connection closed');
  const message = (client?: object) => classifyMcpError(lost, 'files', 'stdio', client).error.message;

  it('says why it was dropped: the first reason given, 500 characters at most', () => {
    const client = {};
    expect(message(client)).toBe('the connection to MCP server "files" was lost mid-request');
    noteDropped(client, 'the MCP server sent more than 1000 requests a second (burst 1000)');
    noteDropped(client, 'a later reason');
    expect(message(client)).toBe('the connection to MCP server "files" was lost mid-request (the MCP server sent more than 1000 requests a second (burst 1000))');
    const long = {};
    noteDropped(long, `listing its tools failed: ${'x'.repeat(2_000)}`);
    expect(message(long)).toBe(`the connection to MCP server "files" was lost mid-request (listing its tools failed: ${'x'.repeat(500 - 'listing its tools failed: '.length)}...)`);
    // Another client, or none: no reason.
    expect(message({})).toBe('the connection to MCP server "files" was lost mid-request');
    expect(message()).toBe('the connection to MCP server "files" was lost mid-request');
  });
});

describe('MCP tool import', () => {
  const [trusted, untrusted] = parseMcpServers([{ name: 't', command: ['x'], trusted: true }, { name: 'u', command: ['x'], prefix: '' }], 'test.yaml');
  const tool = (annotations?: Record<string, boolean>) => ({ name: 'x', inputSchema: { type: 'object' }, annotations });

  it.each([
    [undefined, Effect.SIDE_EFFECT, Effect.SIDE_EFFECT],
    [{ readOnlyHint: true }, Effect.READ_ONLY, Effect.SIDE_EFFECT],
    [{ readOnlyHint: true, destructiveHint: true }, Effect.SIDE_EFFECT, Effect.SIDE_EFFECT],
    [{ readOnlyHint: false, idempotentHint: true, destructiveHint: false }, Effect.SIDE_EFFECT, Effect.SIDE_EFFECT],
  ])('annotations %j give %s when trusted and %s when not', (annotations, whenTrusted, whenUntrusted) => {
    expect(effectOf(tool(annotations), true)).toBe(whenTrusted);
    expect(effectOf(tool(annotations), false)).toBe(whenUntrusted);
  });

  it('prefixes names, keeps the schema (a known draft\'s $schema too, which the compiler upgrades), drops an unknown $schema and skips names dispatch cannot hold', () => {
    const { specs, skipped } = importTools(trusted!, [
      { name: 'read', description: 'reads', inputSchema: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { p: { type: 'string' } } }, annotations: { readOnlyHint: true } },
      { name: 'bad name', inputSchema: { type: 'object' } },
    ]);
    expect(specs.map((s) => [s.name, s.effect, s.concurrencySafe, s.executor.case])).toEqual([['t_read', Effect.READ_ONLY, true, 'mcp']]);
    expect(JSON.parse(specs[0]!.inputSchema)).toEqual({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { p: { type: 'string' } } });
    expect(skipped).toEqual([{ tool: 'bad name', reason: '"t_bad name" is not a valid dispatch tool name (1-128 letters, digits, \'_\', \'.\', \':\' or \'-\')' }]);
    expect(importTools(untrusted!, [tool({ readOnlyHint: true })]).specs[0]!.name).toBe('x');
    expect(inputSchemaText({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' })).toBe('{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}');
    expect(inputSchemaText({ $schema: 'https://example.com/my-meta', type: 'object' })).toBe('{"type":"object"}');
  });

  it("cuts a description past the spec's bound (32,768 characters) and imports the tool, saying so; was skipped", () => {
    const long = '\u{1F600}'.repeat(40_000);
    const { specs, skipped, cut } = importTools(trusted!, [{ name: 'long', description: long, inputSchema: { type: 'object' } }]);
    expect(skipped).toEqual([]);
    expect(cut).toEqual([{ tool: 'long', chars: 40_000 }]);
    expect([...specs[0]!.description]).toHaveLength(32_768);
    expect(specs[0]!.description.endsWith('\u{1F600} [description cut]')).toBe(true);
    const registry = createToolRegistry(createSchemaCompiler(65_536), () => new Set(['mcp']));
    expect(registry.register(specs, { tenant: '' }).map((t) => t.name)).toEqual(['t_long']);
  });
});

describe('MCP result text', () => {
  it('joins text parts and describes the others', () => {
    expect(resultText({ content: [{ type: 'text', text: 'a' }, { type: 'image', mimeType: 'image/png', data: 'AAAA' }, { type: 'resource', resource: { uri: 'file:///x', text: 'body' } }, { type: 'resource_link', uri: 'file:///y', name: 'y' }] })).toBe(
      'a\n[image: image/png, 4 base64 characters]\nbody\n[resource link: file:///y (y)]',
    );
    expect(resultText({ content: [], structuredContent: { n: 1 } })).toBe('{"n":1}');
    expect(resultText({})).toBe('');
  });
});
