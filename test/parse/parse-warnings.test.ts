import { Readable } from 'node:stream';
import { parseToolCalls } from '../../src/parse';
import { parseCommand } from '../../src/cli/parse-command';
import { startApp, type TestDispatch } from '../helpers/servers';

// Found by writing a client from the proto alone: a call ParseToolCalls found and did not return
// (malformed, cut off, naming a tool not offered) came back exactly as a text with no call, so a
// backend showed the model's call to the user as prose instead of telling the model. What was left
// in remaining_text, and why, is now in `warnings`.

const warningsOf = (text: string, offered: string[] = [], maxCalls?: number) => parseToolCalls(text, offered, maxCalls === undefined ? undefined : { maxCalls }).warnings;

describe('warnings', () => {
  it('name a call of a tool not offered, and one cut off', () => {
    expect(warningsOf('<tool_call>{"name":"echo","arguments":{}}</tool_call>', ['sleep'])).toEqual(['a call of "echo" was not offered: left in remaining_text']);
    expect(warningsOf('[TOOL_CALLS][{"name":"a","arguments":{}},{"name":"b","arguments":{}},{"name":"c","arguments":{}}]', ['c'])).toEqual(['calls of "a", "b" were not offered: left in remaining_text']);
    expect(warningsOf('{"name":"get_weather","arguments":{"city":"Paris"')).toEqual(['a call of "get_weather" was cut off before its arguments ended: left in remaining_text']);
  });

  it('name the first marker that did not read as a call, beside calls that did too', () => {
    const text = 'Sure. <tool_call>{"name":"echo","arguments":{"a":1}}</tool_call> and <tool_call>{"name": "x", "arguments": {"a" 1}}</tool_call>';
    const result = parseToolCalls(text);
    expect(result.calls.map((call) => call.name)).toEqual(['echo']);
    expect(result.warnings).toEqual([`a "<tool_call>" marker at character ${text.lastIndexOf('<tool_call>')} did not read as a call (malformed, or cut off): left in remaining_text`]);
    expect(warningsOf('[TOOL_CALLS] [{"name": "f", "arguments": {]')).toEqual(['a "[TOOL_CALLS]" marker at character 0 did not read as a call (malformed, or cut off): left in remaining_text']);
  });

  it('say when calls came past the limit per turn', () => {
    const calls = JSON.stringify(['a', 'b', 'c'].map((name) => ({ name, arguments: {} })));
    expect(warningsOf(`[TOOL_CALLS]${calls}`, [], 2)).toEqual(['calls past the limit of 2 per turn were left in remaining_text']);
    expect(warningsOf('<tool_call>{"name":"a","arguments":{}}</tool_call><tool_call>{"name":"b","arguments":{}}</tool_call>', [], 1)).toEqual(['calls past the limit of 1 per turn were left in remaining_text']);
  });

  it('are absent when every call found is returned, or none was written; reasoning is not read', () => {
    for (const text of [
      '<tool_call>{"name":"echo","arguments":{}}</tool_call>',
      '<tool_call>\n{"name":"echo","arguments":{"a":1}}',
      'Plain prose, no call.',
      '<think>maybe <tool_call>{"name": "x"</think>No call needed.',
      '```json\n{"name": "f", "arguments": {}}\n```',
    ]) {
      expect(parseToolCalls(text)).not.toHaveProperty('warnings');
    }
  });

  it('quote a made-up name cut to 64 characters, and list at most 8', () => {
    const long = 'n'.repeat(200);
    expect(warningsOf(`<tool_call>{"name":"${long}","arguments":{}}</tool_call>`, ['x'])).toEqual([`a call of "${'n'.repeat(64)}..." was not offered: left in remaining_text`]);
    const many = Array.from({ length: 20 }, (_, i) => ({ name: `t${i}`, arguments: {} }));
    const [warning] = warningsOf(`[TOOL_CALLS]${JSON.stringify(many)}`, ['x'])!;
    expect(warning).toBe(`calls of ${many.slice(0, 8).map((c) => `"${c.name}"`).join(', ')} and more were not offered: left in remaining_text`);
  });
});

describe('through the RPC and dispatchctl parse', () => {
  let d: TestDispatch;
  beforeAll(async () => {
    d = await startApp('tools:\n  - { name: echo, effect: read_only, builtin: { name: echo } }\n');
  });
  afterAll(() => d?.close());

  it('ParseToolCallsResponse carries the warnings', async () => {
    const parsed = await d.dispatch.parseToolCalls({ text: '<tool_call>{"name": "echo", "arguments": {"a": </tool_call>', offeredTools: [] });
    expect(parsed.calls).toEqual([]);
    expect(parsed.warnings).toEqual(['a "<tool_call>" marker at character 0 did not read as a call (malformed, or cut off): left in remaining_text']);
    expect((await d.dispatch.parseToolCalls({ text: '<tool_call>{"name":"echo","arguments":{}}</tool_call>', offeredTools: [] })).warnings).toEqual([]);
  });

  it('dispatchctl parse prints them', async () => {
    const lines: string[] = [];
    await parseCommand('-', (line) => lines.push(line), { stdin: Readable.from(['<tool_call>{"name":"echo","arguments":{}}</tool_call>']), offeredTools: ['sleep'] });
    expect(lines).toContain('warning: a call of "echo" was not offered: left in remaining_text');
  });
});
