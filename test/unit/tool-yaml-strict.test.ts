// fromJson takes a ToolSpec's camelCase JSON names and numbers written as text; the config file's
// tools are snake_case with numbers (and booleans) as such, like every other section.
import { ConfigError, parseConfig } from '../../src/config';

const problem = (tool: string) => {
  try {
    parseConfig(`tools:\n  - { name: e, builtin: { name: echo }, ${tool} }\n`, 'dispatch.yaml');
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  return 'accepted';
};

test.each([
  ['retry: { max_attempts: "3" }', 'tools[0].retry.max_attempts: must be a number, not text: got "3"'],
  ['retry: { backoff_multiplier: "2" }', 'tools[0].retry.backoff_multiplier: must be a number, not text: got "2"'],
  ['loop: { warn_threshold: "3" }', 'tools[0].loop.warn_threshold: must be a number, not text: got "3"'],
  ['idempotency: { ttl_seconds: "60" }', 'tools[0].idempotency.ttl_seconds: must be a number, not text: got "60"'],
  ['concurrency_safe: "true"', 'tools[0].concurrency_safe: must be true or false, not text: got "true"'],
  ['timeoutMs: "7000"', 'tools[0].timeoutMs: unknown key "timeoutMs" (did you mean timeout_ms?)'],
  ['timeout_ms: 1000, timeoutMs: 50000', 'tools[0].timeoutMs: unknown key "timeoutMs" (did you mean timeout_ms?)'],
  ['inputSchema: "{}"', 'tools[0].inputSchema: unknown key "inputSchema" (did you mean input_schema?)'],
  ['retry: { maxAttempts: 2 }', 'tools[0].retry.maxAttempts: unknown key "maxAttempts" (did you mean max_attempts?)'],
  ['effect: 1', 'tools[0].effect: must be read_only or side_effect, got 1'],
])('refuses %s', (tool, message) => {
  expect(problem(tool)).toBe(`dispatch.yaml: ${message}`);
});

test('snake_case keys with numbers, booleans and text where text goes are accepted', () => {
  expect(problem('effect: read_only, timeout_ms: 7000, input_schema: "{}", concurrency_safe: true, retry: { max_attempts: 3, backoff_multiplier: 2 }, idempotency: { key_fields: ["/a"], ttl_seconds: 60 }, description: "5"')).toBe('accepted');
});
