import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startDispatch, type TestDispatch } from '../helpers/servers';

// A call of a name that was offered but names no registered tool (the backend offered a tool this
// tenant lacks) is UNKNOWN_TOOL with a "did you mean" and the available tools: both among the tools
// the model was offered. A tool it was not offered, named there, would only be refused in turn
// ("it was not offered to you"), and the list told the model of tools its backend kept from it.

let d: TestDispatch;
beforeAll(async () => {
  d = await startDispatch(`
tools:
  - { name: weather, effect: read_only, builtin: { name: echo } }
  - { name: lookup, effect: read_only, builtin: { name: echo } }
  - { name: secret_admin, effect: read_only, builtin: { name: echo } }
`);
});
afterAll(() => d.close());

test('an offered name that names no tool suggests only offered tools, and lists only those', async () => {
  const { results } = await d.dispatch.dispatch({ sessionId: 'offered-unknown', offeredTools: ['weathr', 'lookup'], calls: [{ id: 'c1', name: 'weathr', arguments: '{}' }] });
  const result = results[0]!;
  expect(result.error?.kind).toBe(ErrorKind.UNKNOWN_TOOL);
  expect(result.error?.message).toBe('tool "weathr" not found');
  expect(result.error?.suggestion).toBe('Available tools: lookup.');
});

test('a near miss of an offered tool is still suggested', async () => {
  const { results } = await d.dispatch.dispatch({ sessionId: 'offered-near', offeredTools: ['weathr', 'weather'], calls: [{ id: 'c1', name: 'weathr', arguments: '{}' }] });
  expect(results[0]!.error?.message).toBe('tool "weathr" not found; did you mean "weather"?');
  expect(results[0]!.error?.suggestion).toBe('Call "weather" instead, if it is what you meant. Available tools: weather.');
});

test('a near miss of an offered name that was not itself offered names the offered tool', async () => {
  const { results } = await d.dispatch.dispatch({ sessionId: 'not-offered-near', offeredTools: ['weather', 'lookup'], calls: [{ id: 'c1', name: 'wether', arguments: '{}' }] });
  expect(results[0]!.error?.kind).toBe(ErrorKind.UNKNOWN_TOOL);
  expect(results[0]!.error?.message).toBe('tool "wether" is not available; it was not offered to you; did you mean "weather"?');
  expect(results[0]!.error?.suggestion).toBe('Call "weather" instead, if it is what you meant. Call one of the offered tools: weather, lookup.');
});

test('a name far from every offered one gets the list alone, not a registered tool kept from the model', async () => {
  const { results } = await d.dispatch.dispatch({ sessionId: 'not-offered-far', offeredTools: ['weather'], calls: [{ id: 'c1', name: 'secret_admn', arguments: '{}' }] });
  expect(results[0]!.error?.message).toBe('tool "secret_admn" is not available; it was not offered to you');
  expect(results[0]!.error?.suggestion).toBe('Call one of the offered tools: weather.');
});
