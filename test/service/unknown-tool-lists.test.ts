import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startApp } from '../helpers/servers';

// A tool author's probe: with no tool registered, an unknown tool's suggestion read "Available
// tools: ." (a list cut short?); with more than 20, it listed the first 20 and nothing more, so
// the tool the model wanted could seem not to exist. Now it says there is none, or how many more.

const tools = (n: number) => `tools:${Array.from({ length: n }, (_, i) => `\n  - { name: t${String(i).padStart(2, '0')}, effect: read_only, builtin: { name: echo } }`).join('')}\n`;
const unknown = async (yaml: string, offeredTools: string[] = []) => {
  const d = await startApp(yaml);
  try {
    return (await d.dispatch.dispatch({ sessionId: 's', offeredTools, calls: [{ id: 'c1', name: 'zzzz', arguments: '{}' }] })).results[0]!.error!;
  } finally {
    await d.close();
  }
};

test('no tool registered: the suggestion says there is none', async () => {
  expect(await unknown('')).toMatchObject({ kind: ErrorKind.UNKNOWN_TOOL, suggestion: 'No tool is available: answer without calling tools.' });
});

test('more than 20 tools: the first 20 listed, and how many more', async () => {
  const { suggestion } = await unknown(tools(25));
  expect(suggestion).toBe(`Available tools: ${Array.from({ length: 20 }, (_, i) => `t${String(i).padStart(2, '0')}`).join(', ')} (and 5 more).`);
});

test('more than 20 offered: the same', async () => {
  const offered = Array.from({ length: 23 }, (_, i) => `o${i}`);
  expect((await unknown(tools(1), offered)).suggestion).toMatch(/^Call one of the offered tools: o0, o1, .*, o19 \(and 3 more\)\.$/);
});

test('20 or fewer: all of them, nothing added', async () => {
  expect((await unknown(tools(3))).suggestion).toBe('Available tools: t00, t01, t02.');
});
