import { parseConfig } from '../../src/config';
import { unknownKeyProblem } from '../../src/config/unknown-key';
import { startupWarnings } from '../../src/guards';

// Found by a probe: `macth:` under policies listed the keys a policy takes instead of offering
// `match` (a swap of two neighbouring letters is two edits, past the bound for a 5-letter key),
// and a fallback_tool naming no tool was offered the tool itself, which the file may not name.

test.each<[string, readonly string[], string]>([
  ['macth', ['name', 'match', 'when', 'decide'], 'match'],
  ['naem', ['name', 'match'], 'name'],
  ['timoeut_ms', ['timeout_ms', 'fail_open'], 'timeout_ms'],
  ['effcet', ['name', 'effect'], 'effect'],
])('a key with two neighbouring letters swapped (%s) is offered the key it misspells', (key, known, meant) => {
  expect(unknownKeyProblem(key, known)).toBe(`unknown key "${key}" (did you mean ${meant}?)`);
});

test('a made-up short key is still offered nothing far from it', () => {
  expect(unknownKeyProblem('abc', ['match', 'when'])).toBe('unknown key "abc" (expected one of match, when)');
});

test('a fallback_tool naming no tool is not offered the tool itself', () => {
  const yaml = `
tools:
  - { name: x, effect: read_only, builtin: { name: echo }, fallback_tool: y }
  - { name: zz_other, effect: read_only, builtin: { name: echo } }
`;
  const warning = startupWarnings(parseConfig(yaml, 'dispatch.yaml')).find((w) => w.fields.fallbackTool === 'y');
  expect(warning?.message).toBe('tool "x": fallback_tool "y" names no tool of the config file; the fallback is taken only once a tool of that name is registered (by a tenant or an MCP server)');
});
