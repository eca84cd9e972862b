// A value starting with `!` is a YAML tag. The yaml library only warns about a tag it does not know
// and keeps the rest of the value: an unquoted API key `!kJ8...` was read as "" and a header
// `!Bearer tok` as "tok", silently, so the tool was called with the wrong credential. It is a
// config error at its line, without the tag's text (it may be the secret).
import { ConfigError, parseConfig } from '../../src/config';

const problem = (text: string) => {
  try {
    const config = parseConfig(text, 'dispatch.yaml');
    return `accepted: ${JSON.stringify({ tools: config.tools.map((t) => t.executor), mcp: config.mcpServers })}`;
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
};

test.each([
  ['an MCP server header that is only a tag', 'mcp_servers:\n  - name: files\n    url: http://mcp.internal/\n    headers:\n      x-api-key: !kJ8-SECRET-9f3\n', 'line 5, column 18'],
  ["a tool's header whose first word is a tag", 'tools:\n  - name: send\n    http:\n      url: http://mailer.internal/\n      headers: { authorization: !Bearer tok-SECRET }\n', 'line 5, column 33'],
  ['a YAML 1.1 tag the 1.2 schema lacks', 'tools:\n  - name: e\n    builtin: { name: echo }\n    timeout_ms: !!float 100\n', 'line 4, column 17'],
])('an unknown tag is a config error at its line: %s', (_, text, at) => {
  const got = problem(text);
  expect(got).toBe(`dispatch.yaml: ${at}: Unresolved tag; put a value starting with ! in quotes`);
  expect(got).not.toContain('SECRET');
});

test('the tags of the YAML 1.2 core schema still read', () => {
  expect(problem('tools:\n  - name: e\n    builtin: { name: echo }\n    description: !!str 5\n')).toMatch(/^accepted/);
});
