// Config mistakes an operator makes, reported at the path where they are, in the config's own
// words: a misspelt key at any depth with the key it likely misspells, a duplicate tool, a YAML
// syntax error with its place (not the source line: it may hold a secret), and a wrong value
// without the proto's type names.
import { ConfigError, parseConfig } from '../../src/config';

const problem = (text: string) => {
  try {
    parseConfig(text, 'dispatch.yaml');
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  return 'accepted';
};
const tool = (keys: string) => problem(`tools:\n  - { name: e, ${keys} }\n`);

test.each([
  ['http: { urll: "http://x" }', 'tools[0].http.urll: unknown key "urll" (did you mean url?)'],
  ['builtin: { name: echo }, retry: { max_atempts: 2 }', 'tools[0].retry.max_atempts: unknown key "max_atempts" (did you mean max_attempts?)'],
  ['builtin: { name: echo }, loop: { warn_treshold: 3 }', 'tools[0].loop.warn_treshold: unknown key "warn_treshold" (did you mean warn_threshold?)'],
  ['builtin: { name: echo }, idempotency: { key_field: ["/a"] }', 'tools[0].idempotency.key_field: unknown key "key_field" (did you mean key_fields?)'],
  ['builtin: { name: echo }, effct: read_only', 'tools[0].effct: unknown key "effct" (did you mean effect?)'],
  ['builtin: { name: echo }, retry: { zzz: 1 }', 'tools[0].retry.zzz: unknown key "zzz" (expected one of max_attempts, initial_backoff_ms, max_backoff_ms, backoff_multiplier, jitter)'],
  ['worker: { queue: q }', 'tools[0].worker.queue: unknown key "queue" (this mapping takes no keys)'],
  ['builtin: { name: echo }, memoize: false', 'tools[0].memoize: unknown key "memoize" (did you mean memoize_ttl_seconds or skip_memoize?)'],
  ['builtin: { name: echo }, redaction: false', 'tools[0].redaction: unknown key "redaction" (did you mean skip_redaction?)'],
])('a misspelt key at any depth: %s', (keys, message) => {
  expect(tool(keys)).toBe(`dispatch.yaml: ${message}`);
});

test('misspelt keys of the other sections get a did-you-mean too', () => {
  expect(problem('tool:\n  - { name: e, builtin: { name: echo } }\n')).toBe('dispatch.yaml: tool: unknown key "tool" (did you mean tools?)');
  expect(problem('auth:\n  token_file: t.yaml\n')).toBe('dispatch.yaml: auth.token_file: unknown key "token_file" (did you mean tokens_file?)');
  expect(problem('redis:\n  url: redis://h\n  max_spill_byte: 5\n')).toBe('dispatch.yaml: redis.max_spill_byte: unknown key "max_spill_byte" (did you mean max_spill_bytes?)');
});

test('a tool defined twice is refused at the second, naming the first (not "in one request")', () => {
  expect(problem('tools:\n  - { name: a, builtin: { name: echo } }\n  - { name: b, builtin: { name: echo } }\n  - { name: a, builtin: { name: echo } }\n')).toBe(
    'dispatch.yaml: tools[2].name: tool "a" is already defined by tools[0]; each tool name appears once',
  );
});

test('a YAML syntax error: file, line and column once and what is wrong, without the source line', () => {
  expect(problem('tools:\n  - name: a\n    effect: read_only\n   builtin: { name: echo }\n')).toBe('dispatch.yaml: line 4, column 1: Sequence item without - indicator');
});

test.each([
  ['a duplicated header', 'tools:\n  - name: send\n    http: {url: "http://x/", headers: {authorization: "Bearer tok-AAA", authorization: "Bearer tok-BBB"}}\n', 'line 3, column 73: Map keys must be unique'],
  ["an MCP server's env", 'mcp_servers:\n  - name: files\n    command: [node, x.js]\n    env: { API_KEY: "ak-SECRET456", OTHER: x }}\n', 'line 4, column 47: Unexpected flow-map-end token in YAML stream'],
  ['a stray token', 'tools: []\n]ak-SECRET456\n', 'line 2, column 1: Unexpected flow-seq-end token in YAML stream'],
  ["a block scalar's header", 'telemetry:\n  key: | ak-SECRET456\n    x\n', 'line 2, column 10: Not a YAML token'],
  ['an escape in a quoted secret', 'telemetry:\n  key: "ak-SECRET\\q456"\n', 'line 2, column 18: Invalid escape sequence'],
])('a secret on the line of a YAML syntax error is not in the message (stderr ends in pod logs): %s', (_, text, message) => {
  const got = problem(text);
  expect(got).toBe(`dispatch.yaml: ${message}`);
  expect(got).not.toMatch(/tok-|SECRET/);
});

test.each([
  ['builtin: { name: echo }, mcp: { server: s, tool: t }', 'tools[0].mcp: a tool has exactly one executor, one of http, worker, mcp, builtin; this one also has builtin'],
  ['builtin: { name: echo }, retry: { max_attempts: -1 }', 'tools[0].retry.max_attempts: must be a non-negative integer, got -1'],
  ['builtin: { name: echo }, loop: { stop_threshold: 2.5 }', 'tools[0].loop.stop_threshold: must be a non-negative integer, got 2.5'],
  ['builtin: { name: echo }, retry: { max_backoff_ms: 5000000000 }', 'tools[0].retry.max_backoff_ms: must be at most 4294967295, got 5000000000'],
  ['builtin: { name: echo }, retry: { jitter: true }', 'tools[0].retry.jitter: must be a number, got true'],
  ['builtin: { name: echo }, description: 5', 'tools[0].description: must be text, got 5 (put it in quotes)'],
  ['builtin: { name: echo }, idempotency: { key_fields: [1] }', 'tools[0].idempotency.key_fields[0]: must be text, got 1 (put it in quotes)'],
  ['builtin: { name: echo }, idempotency: { key_fields: "/a" }', 'tools[0].idempotency.key_fields: must be a list, got "/a"'],
  // A header's value is not quoted: an all-digit API key would be printed.
  ['http: { url: "http://x", headers: { x-api-key: 8273649182736 } }', 'tools[0].http.headers.x-api-key: must be text, got a number (put it in quotes)'],
  ['builtin: { name: echo }, retry: 3', 'tools[0].retry: must be a mapping, got 3'],
  ['builtin: { name: echo }, effect: EFFECT_BOGUS', 'tools[0].effect: must be read_only or side_effect, got "EFFECT_BOGUS"'],
  // Quoting these, as "must be text ... (put it in quotes)" said, only moved the refusal.
  ['builtin: { name: echo }, input_schema: true', 'tools[0].input_schema: must be a JSON Schema object: a mapping, or JSON text of one; got true'],
  ['builtin: { name: echo }, input_schema: [1]', 'tools[0].input_schema: must be a JSON Schema object: a mapping, or JSON text of one; got [1]'],
  ['builtin: { name: echo }, input_schema: 5', 'tools[0].input_schema: must be a JSON Schema object: a mapping, or JSON text of one; got 5'],
  // An executor left empty counts: fromJson said "oneof set multiple times", with no path.
  ['builtin: , worker: ', 'tools[0].worker: a tool has exactly one executor, one of http, worker, mcp, builtin; this one also has builtin'],
  ['http: , builtin: { name: echo }', 'tools[0].builtin: a tool has exactly one executor, one of http, worker, mcp, builtin; this one also has http'],
])('a wrong value is said in the config\'s terms: %s', (keys, message) => {
  const got = tool(keys);
  expect(got).toBe(`dispatch.yaml: ${message}`);
  expect(got).not.toMatch(/dispatch\.v1|uint32|oneof|decode/);
});

test('the proto\'s enum names and a schema written as YAML are still taken', () => {
  expect(tool('builtin: { name: echo }, effect: EFFECT_SIDE_EFFECT, input_schema: { type: object }')).toBe('accepted');
  expect(tool('worker:, effect: side_effect')).toBe('accepted');
  expect(tool('builtin: { name: echo }, input_schema: \'{"type": "object"}\'')).toBe('accepted');
});
