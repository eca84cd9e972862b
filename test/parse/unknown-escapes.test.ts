import { parseToolCalls } from '../../src/parse';

/**
 * A model writing a regex or a Windows path into JSON arguments often leaves its backslashes
 * unescaped: `"\d+\.\d+"`, `"C:\Users\xavier"`, which JSON refuses. Read leniently, each such escape
 * dropped its backslash (as JavaScript does): the tool got `d+.d+` (another regex) and
 * `C:Usersxavier` (another path). They keep it now, as Python keeps it.
 */
const argumentsOf = (json: string) => JSON.parse(parseToolCalls(`<tool_call>{"name": "grep", "arguments": ${json}}</tool_call>`).calls[0]!.arguments) as Record<string, string>;

test('a regex with unescaped backslashes reaches the tool as written', () => {
  expect(argumentsOf(String.raw`{"pattern": "\d+\.\d+\s*\w", "flags": "g"}`)).toEqual({ pattern: String.raw`\d+\.\d+\s*\w`, flags: 'g' });
});

test('a Windows path keeps its backslashes, a malformed \\x or \\u among them', () => {
  expect(argumentsOf(String.raw`{"path": "C:\Users\xavier\Documents\usage.txt"}`)).toEqual({ path: String.raw`C:\Users\xavier\Documents\usage.txt` });
});

test("JSON's escapes, \\' and the escapes JavaScript and Python share still decode", () => {
  expect(argumentsOf(String.raw`{"a": "\"q\" \\ \/ \n\t \u00e9 \x41 \101 \'s", "b": "x"}`)).toEqual({ a: `"q" \\ / \n\t é A A 's`, b: 'x' });
});
