import { parseToolCalls } from '../../src/parse';
import { slowerThan } from '../helpers/cpu-time';
import { argsOf, callsOf, expectNoCalls } from './parse-helpers';
import { writeFileApp } from './write-file-app';

/** A GLM-4.5 call as its chat template writes it: the name, then each key and value on a line. */
function glmCall(name: string, args: Record<string, string>): string {
  const body = Object.entries(args).map(([key, value]) => `<arg_key>${key}</arg_key>\n<arg_value>${value}</arg_value>\n`).join('');
  return `<tool_call>${name}\n${body}</tool_call>`;
}

/**
 * A value holds raw text (a file a tool writes, code), which may spell GLM's own tags. vLLM's and
 * SGLang's `glm4_moe` parsers end a value at the first `</arg_value>` and read `<arg_key>` in it
 * as text; dispatch does that, and ends a value only at a `</arg_value>` a key or the call's end
 * follows, so a value quoting `</arg_value>` is not cut short either.
 */
describe("a GLM value that spells the format's tags", () => {
  it('keeps <arg_key> and </arg_key> in it as text (code, XML, HTML)', () => {
    const code = "KEY_OPEN = '<arg_key>'\nKEY_CLOSE = '</arg_key>'";
    expect(argsOf(glmCall('write_file', { path: 'tags.py', content: code }))).toEqual({ path: 'tags.py', content: code });
    const xml = '<config>\n  <arg_key>retries</arg_key>\n  <value>3</value>\n</config>';
    expect(argsOf(glmCall('write_file', { content: xml, path: 'c.xml' }))).toEqual({ content: xml, path: 'c.xml' });
    const prose = 'Use <arg_key>k</arg_key> tags';
    expect(parseToolCalls(glmCall('write', { content: prose }))).toMatchObject({ calls: [{ name: 'write', arguments: JSON.stringify({ content: prose }) }], remainingText: '', format: 'glm_xml' });
  });

  it('keeps a </arg_value> it quotes, ending at the one a key or </tool_call> follows', () => {
    const code = 'CLOSE = "</arg_value>"\nprint(CLOSE)';
    expect(argsOf(glmCall('write_file', { content: code, path: 'a.py' }))).toEqual({ content: code, path: 'a.py' });
    expect(argsOf(glmCall('write_file', { path: 'a.py', content: code }))).toEqual({ path: 'a.py', content: code });
    const twice = 'a</arg_value>b</arg_value>\tc';
    expect(argsOf(`<tool_call>w<arg_key>x</arg_key><arg_value>${twice}</arg_value></tool_call>`)).toEqual({ x: twice });
  });

  it('keeps a whole key and value pair it quotes', () => {
    const doc = 'GLM writes <arg_key>city</arg_key><arg_value>Paris</arg_value> for each argument.';
    expect(argsOf(glmCall('write_file', { content: doc, path: 'glm.md' }))).toEqual({ content: doc, path: 'glm.md' });
    const html = '<p>The tags: <code><arg_key>k</arg_key>\n<arg_value>v</arg_value></code></p>';
    expect(argsOf(glmCall('write_file', { content: html }))).toEqual({ content: html });
  });

  it('left open before the next key or </tool_call> still ends there', () => {
    expect(argsOf('<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>1\n<arg_key>b</arg_key>\n<arg_value>2</arg_value>\n</tool_call>')).toEqual({ a: 1, b: 2 });
    expect(argsOf('<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>x <arg_key>\n<arg_key>b</arg_key>\n<arg_value>2\n</tool_call>')).toEqual({ a: 'x <arg_key>', b: 2 });
  });

  it('does not swallow the call after a broken one, nor take prose after a value for its text', () => {
    const next = glmCall('b', { y: '2' });
    const broken = '<tool_call>a<arg_key>x</arg_key><arg_value>1</arg_value>prose</tool_call>';
    expect(parseToolCalls(`${broken}\n${next}`)).toMatchObject({ calls: [{ name: 'b', arguments: '{"y":2}' }], remainingText: broken });
    expectNoCalls('<tool_call>a<arg_key>x</arg_key><arg_value>1</arg_value>prose</tool_call>');
    expectNoCalls('<tool_call>a<arg_key>x</arg_key><arg_value>1</arg_value>prose\n<arg_key>y</arg_key><arg_value>2</arg_value></tool_call>');
  });
});

/**
 * ParseToolCalls is given tool names only (`offered_tools`), never their schemas, so a value is
 * read as JSON when it is JSON, whatever type the tool declares (as vLLM's `glm4_moe` parser does
 * for a tool it has no schema of): `123` is a number, `007` text.
 */
describe('a GLM value read without a schema', () => {
  it('is JSON when it is JSON, else text', () => {
    expect(argsOf(glmCall('f', { a: '123', b: 'true', c: 'null', d: '007', e: 'None', f: '"quoted"' }))).toEqual({ a: 123, b: true, c: null, d: '007', e: 'None', f: 'quoted' });
  });
});

describe('hostile GLM values parse in linear time', () => {
  const SIZE = 1024 * 1024;
  // As in qwen-xml.test.ts: two parses of a MiB take 20-150 ms of CPU; a quadratic scan takes seconds.
  // Doubled from 175: beside other jest workers on two cores the thin cases passed it only by luck (a quadratic scan takes seconds).
  const LIMIT_MS = 350;
  const build = (prefix: string, unit: string, suffix = '', size = SIZE): string => (prefix + unit.repeat(Math.ceil(size / unit.length))).slice(0, size - suffix.length) + suffix;
  const OPEN = '<tool_call>w<arg_key>x</arg_key><arg_value>';

  it.each([
    ['<arg_value> repeated', '', '<arg_value>', ''],
    ['<arg_value> repeated in a call', OPEN, '<arg_value>', '</arg_value></tool_call>'],
    ['</arg_value><arg_key> repeated', '', '</arg_value><arg_key>', ''],
    ['</arg_value><arg_key> repeated in a call', OPEN, '</arg_value><arg_key>', '</arg_value></tool_call>'],
    ['</arg_value> then prose repeated in a call', OPEN, '</arg_value>x', '</arg_value></tool_call>'],
    ['quoted key and value pairs in a call', OPEN, '<arg_key>k</arg_key><arg_value>v</arg_value> ', '</arg_value></tool_call>'],
    ['headers left open', '', '<tool_call>w<arg_key>x</arg_key><arg_value>1 ', ''],
    ['whole calls quoted in a call', OPEN, '<tool_call>f\n<arg_key>k</arg_key>\n<arg_value>v</arg_value>\n</tool_call>\n', '</arg_value></tool_call>'],
    ['broken calls with a bad </arg_value>', '', `${OPEN}1</arg_value>x `, ''],
    ['closes then spaces', OPEN, `</arg_value>${' '.repeat(64)}x`, '</arg_value></tool_call>'],
  ])('%s, with any tool offered and with none of them', (_name, prefix, unit, suffix) => {
    const text = build(prefix, unit, suffix);
    expect(text).toHaveLength(SIZE);
    for (let i = 0; i < 8; i++) parseToolCalls(text.slice(0, SIZE / 16), ['other']);
    const parse = (input: string) => (): void => {
      parseToolCalls(input);
      parseToolCalls(input, ['other']);
    };
    // Past the limit, held to 8x the same input a quarter as long (a quadratic scan takes 16x).
    expect(slowerThan(parse(text), parse(build(prefix, unit, suffix, SIZE / 4)), 8, 2 * LIMIT_MS)).toBeUndefined();
  });
});

describe('through the ParseToolCalls RPC', () => {
  const app = writeFileApp();

  it('a file whose text spells the tags is parsed whole and written as it was', async () => {
    const d = app.d();
    const content = '<root>\n  <arg_key>a</arg_key>\n  <note>"</arg_value>" ends a value</note>\n</root>';
    const text = `I will write it.\n${glmCall('write_file', { path: 'x.xml', content })}`;
    const reply = await d.dispatch.parseToolCalls({ text, offeredTools: ['write_file'] });
    expect(reply.format).toBe('glm_xml');
    expect(reply.remainingText).toBe('I will write it.');
    expect(reply.calls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([['write_file', { path: 'x.xml', content }]]);
    const { results } = await d.dispatch.dispatch({ sessionId: 'glm-values', calls: reply.calls.map(({ id, name, arguments: args }) => ({ id, name, arguments: args })) });
    expect(results.map((r) => [r.isError, r.output])).toEqual([[false, JSON.stringify({ path: 'x.xml', content })]]);
  });
});
