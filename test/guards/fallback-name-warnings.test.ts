import { parseConfig } from '../../src/config';
import { startupWarnings } from '../../src/guards';
import { startApp } from '../helpers/servers';
import type { Logger } from '../../src/log';

// A config-file tool whose fallback_tool names no tool loaded without a word (a read-only tool
// falling back to a side-effecting one was warned of): a misspelt fallback left the tool without
// it. Warned at start-up now, with the nearest name.

const yaml = `
tools:
  - { name: web_search, effect: read_only, builtin: { name: echo }, fallback_tool: cached_serch }
  - { name: cached_search, effect: read_only, builtin: { name: echo } }
  - { name: lookup, effect: read_only, builtin: { name: echo }, fallback_tool: from_a_tenant }
  - { name: fine, effect: read_only, builtin: { name: echo }, fallback_tool: cached_search }
`;

test('a fallback_tool naming no tool of the config file is warned of, with the name likely meant', () => {
  const warnings = startupWarnings(parseConfig(yaml, 'dispatch.yaml')).filter((w) => 'fallbackTool' in w.fields);
  expect(warnings).toEqual([
    {
      message: 'tool "web_search": fallback_tool "cached_serch" names no tool of the config file (did you mean "cached_search"?); the fallback is taken only once a tool of that name is registered (by a tenant or an MCP server)',
      fields: { tool: 'web_search', fallbackTool: 'cached_serch' },
    },
    {
      message: 'tool "lookup": fallback_tool "from_a_tenant" names no tool of the config file; the fallback is taken only once a tool of that name is registered (by a tenant or an MCP server)',
      fields: { tool: 'lookup', fallbackTool: 'from_a_tenant' },
    },
  ]);
});

test('dispatch logs it at start-up, naming the file', async () => {
  const warned: [string, Record<string, unknown> | undefined][] = [];
  const logger: Logger = { debug() {}, info() {}, error() {}, warn: (message, fields) => void warned.push([message, fields]) };
  const app = await startApp(yaml, { logger });
  await app.close();
  expect(warned.filter(([message]) => message.includes('fallback_tool')).map(([, fields]) => fields?.fallbackTool)).toEqual(['cached_serch', 'from_a_tenant']);
});

// A config author's probe: a `breaker:` entry whose match fits no tool (`wbe` for `web`) loaded
// silently, the tool keeping the default breaker; the decide, budget, concurrency and rate kinds
// were warned of. Breaker entries are now too.
test("a breaker entry whose match fits no tool of the config file is warned of, with the name likely meant", () => {
  const config = parseConfig('tools:\n  - { name: web, effect: read_only, builtin: { name: echo } }\npolicies:\n  - { match: wbe, breaker: { consecutive_failures: 2 } }\n', 'dispatch.yaml');
  expect(startupWarnings(config).map((w) => w.message)).toEqual([
    'policies[0]: match "wbe" fits no tool of the config file (did you mean "web"?); the breaker entry applies only to tools registered later (by a tenant or an MCP server) that it fits',
  ]);
});
