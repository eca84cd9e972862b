// A fallback_tool naming no tool was warned of at start-up only: a tool registered later with one
// that names nothing, or the tool a fallback named removed by RemoveTool, left the fallback never
// taken without a word. Now each such change is warned of once (not per call).
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import type { Logger } from '../../src/log';
import { startApp, type TestDispatch } from '../helpers/servers';

const yaml = `
tools:
  - { name: lookup, effect: read_only, builtin: { name: echo }, fallback_tool: mirror }
`;
const spec = (name: string, fallbackTool = '') => ({ name, effect: Effect.READ_ONLY, inputSchema: '{"type":"object"}', fallbackTool, executor: { case: 'builtin' as const, value: { name: 'echo' } } });

let d: (TestDispatch & { app: unknown }) | undefined;
const warned: [string, Record<string, unknown> | undefined][] = [];
const logger: Logger = { debug() {}, info() {}, error() {}, warn: (message, fields) => void warned.push([message, fields]) };
const fallbackWarnings = () => warned.filter(([message]) => message.includes('fallback_tool')).map(([message, fields]) => ({ message, fields }));

beforeEach(async () => {
  warned.length = 0;
  d = await startApp(yaml, { logger });
});
afterEach(async () => {
  await d?.close();
  d = undefined;
});

test('removing the tool a fallback_tool names warns once; registering it again and calls do not', async () => {
  expect(fallbackWarnings()).toHaveLength(1); // start-up: mirror is not in the file
  warned.length = 0;
  await d!.registry.registerTools({ tools: [spec('mirror')] });
  expect(fallbackWarnings()).toEqual([]);
  expect((await d!.registry.removeTool({ name: 'mirror' })).removed).toBe(true);
  expect(fallbackWarnings()).toEqual([
    {
      message: 'tool "lookup": fallback_tool "mirror" names no tool tenant "default" sees since tool "mirror" was removed; the fallback is taken only once a tool of that name is registered',
      fields: { tenant: 'default', tool: 'lookup', fallbackTool: 'mirror' },
    },
  ]);
  for (let i = 0; i < 3; i++) await d!.dispatch.dispatch({ sessionId: 's', calls: [{ id: `c${i}`, name: 'lookup', arguments: '{}' }] });
  await d!.registry.registerTools({ tools: [spec('unrelated')] });
  expect(fallbackWarnings()).toHaveLength(1);
});

test('a tool registered with a fallback_tool naming no tool is warned of once', async () => {
  warned.length = 0;
  await d!.registry.registerTools({ tools: [spec('search', 'serach_cache'), spec('search_cache')] });
  expect(fallbackWarnings()).toEqual([
    {
      message: 'tool "search" of tenant "default": fallback_tool "serach_cache" names no tool since tools were registered ("search", "search_cache"); the fallback is taken only once a tool of that name is registered',
      fields: { tenant: 'default', tool: 'search', fallbackTool: 'serach_cache' },
    },
  ]);
  for (let i = 0; i < 3; i++) await d!.dispatch.dispatch({ sessionId: 's', calls: [{ id: `c${i}`, name: 'search', arguments: '{}' }] });
  await d!.registry.registerTools({ tools: [spec('search', 'serach_cache')], replace: true });
  expect(fallbackWarnings()).toHaveLength(1);
});
