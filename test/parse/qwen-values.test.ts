import { DEFAULT_MAX_INPUT_CHARS, parseToolCalls } from '../../src/parse';
import { slowerThan } from '../helpers/cpu-time';
import { argsOf, callsOf, expectNoCalls } from './parse-helpers';
import { writeFileApp } from './write-file-app';

/** A Qwen3-Coder call as its chat template writes it: each tag and value on lines of their own. */
function qwenCall(name: string, params: Record<string, string>, wrap = true): string {
  const body = Object.entries(params).map(([key, value]) => `<parameter=${key}>\n${value}\n</parameter>\n`).join('');
  const fn = `<function=${name}>\n${body}</function>`;
  return wrap ? `<tool_call>\n${fn}\n</tool_call>` : fn;
}

/**
 * A value holds raw text (a file a tool writes, code), which may spell Qwen3-Coder's own tags.
 * vLLM's `qwen3_coder` parser ends a value at a `</parameter>` that the next `<parameter=`,
 * `</function>` or `</tool_call>` follows; dispatch does too, so a value quoting `</parameter>`
 * is read whole instead of the call being lost.
 */
describe("a Qwen3-Coder value that spells the format's tags", () => {
  it('keeps </parameter> in an XML file it writes, before or after the other parameters', () => {
    const xml = '<?xml version="1.0"?>\n<tool>\n  <parameter>retries</parameter>\n  <value>3</value>\n</tool>';
    expect(argsOf(qwenCall('write_file', { path: 'tool.xml', content: xml }))).toEqual({ path: 'tool.xml', content: xml });
    expect(argsOf(qwenCall('write_file', { content: xml, path: 'tool.xml' }))).toEqual({ content: xml, path: 'tool.xml' });
    expect(parseToolCalls(`Writing it.\n${qwenCall('write_file', { content: xml }, false)}`)).toMatchObject({
      calls: [{ name: 'write_file', arguments: JSON.stringify({ content: xml }) }],
      remainingText: 'Writing it.',
      format: 'qwen_xml',
    });
  });

  it('keeps </parameter> and </function> in HTML it writes', () => {
    const html = '<p>A value ends at <code></parameter></code>, a call at <code></function></code>.</p>\n<p>Done.</p>';
    expect(argsOf(qwenCall('write_file', { path: 'tags.html', content: html }))).toEqual({ path: 'tags.html', content: html });
  });

  it('keeps the tags in code that prints them', () => {
    const py = 'PARAM_CLOSE = "</parameter>"\nprint(PARAM_CLOSE)\nprint("</function>")';
    expect(argsOf(qwenCall('write_file', { content: py, path: 'tags.py' }))).toEqual({ content: py, path: 'tags.py' });
    const ts = "const open = '<parameter=';\nconst close = '</parameter>';\nconst end = '</function>';";
    expect(argsOf(qwenCall('write_file', { content: ts, path: 'tags.ts' }))).toEqual({ content: ts, path: 'tags.ts' });
  });

  it('keeps a file whose last line is </parameter>, and one quoting it twice', () => {
    expect(argsOf(qwenCall('write_file', { content: '<doc>\n</parameter>', path: 'd.xml' }))).toEqual({ content: '<doc>\n</parameter>', path: 'd.xml' });
    const twice = 'a</parameter>b</parameter>\tc';
    expect(argsOf(`<function=w><parameter=x>${twice}</parameter></function>`)).toEqual({ x: twice });
  });

  it('keeps a whole parameter it quotes', () => {
    const doc = 'Qwen writes <parameter=city>\nParis\n</parameter> for each argument.';
    expect(argsOf(qwenCall('write_file', { content: doc, path: 'qwen.md' }))).toEqual({ content: doc, path: 'qwen.md' });
  });

  it('keeps a <parameter= with no name and > after it, closed or left open', () => {
    expect(argsOf('<function=f>\n<parameter=a>\nx <parameter= y\n</parameter>\n</function>')).toEqual({ a: 'x <parameter= y' });
    expect(argsOf('<function=f>\n<parameter=a>\nx <parameter= y\n</function>')).toEqual({ a: 'x <parameter= y' });
  });

  it('ends at a </parameter> that </tool_call> follows when </function> is missing', () => {
    const code = 'x = "</parameter>"';
    expect(argsOf(`<tool_call><function=w><parameter=c>${code}</parameter></tool_call>`)).toEqual({ c: code });
  });
});

describe('a Qwen3-Coder call broken after a value', () => {
  it('does not swallow the call after it', () => {
    const broken = '<tool_call>\n<function=a>\n<parameter=x>\n1\n</parameter>\nprose\n</function>\n</tool_call>';
    const next = qwenCall('b', { y: '2' });
    expect(parseToolCalls(`${broken}\n${next}`)).toMatchObject({ calls: [{ name: 'b', arguments: '{"y":2}' }], remainingText: broken, format: 'qwen_xml' });
    const bare = '<function=a>\n<parameter=x>\n1\n</parameter>\nprose';
    expect(parseToolCalls(`${bare}\n${qwenCall('b', { y: '2' }, false)}`)).toMatchObject({ calls: [{ name: 'b', arguments: '{"y":2}' }], remainingText: bare });
  });

  it('does not swallow a Hermes call after it', () => {
    const text = '<function=a><parameter=x>1</parameter> prose <tool_call>{"name":"b","arguments":{}}</tool_call> </parameter></function>';
    expect(parseToolCalls(text)).toMatchObject({ calls: [{ name: 'b', arguments: '{}' }], remainingText: '<function=a><parameter=x>1</parameter> prose  </parameter></function>', format: 'hermes' });
  });

  it('does not take prose after a value for its text', () => {
    expectNoCalls('<tool_call>\n<function=a>\n<parameter=x>\n1\n</parameter>\nprose\n</function>\n</tool_call>');
    expectNoCalls('<tool_call>\n<function=a>\n<parameter=x>\n1\n</parameter>\nprose\n<parameter=y>\n2\n</parameter>\n</function>\n</tool_call>');
    expectNoCalls('<function=a>\n<parameter=x>\n1\n</parameter>\nprose');
  });
});

/** README: a value whose `</parameter>` the model left out ends as vLLM's parser ends it. */
describe('a Qwen3-Coder value left open (as before)', () => {
  it('ends at the next <parameter= or at </function>', () => {
    expect(argsOf('<tool_call>\n<function=a>\n<parameter=x>\n1\n<parameter=y>\ntwo\n</parameter>\n</function>\n</tool_call>')).toEqual({ x: 1, y: 'two' });
    expect(argsOf('<function=a>\n<parameter=x>\n1\n<parameter=y>\n2\n<parameter=z>\n3\n</parameter>\n</function>')).toEqual({ x: 1, y: 2, z: 3 });
    expect(argsOf('<tool_call>\n<function=a>\n<parameter=x>\n1\n</function>\n</tool_call>')).toEqual({ x: 1 });
    expect(argsOf('<function=a>\n<parameter=x>\n</tool_call> is text\n</function>')).toEqual({ x: '</tool_call> is text' });
  });

  it('never runs past another call', () => {
    const prose = 'Write <function=NAME>\n<parameter=KEY>\nVALUE';
    expect(parseToolCalls(`${prose}\n${qwenCall('b', { y: '2' })}`)).toMatchObject({ calls: [{ name: 'b', arguments: '{"y":2}' }], remainingText: prose });
    const cut = '<tool_call>\n<function=a>\n<parameter=x>\n1';
    expect(parseToolCalls(`${cut}\n${qwenCall('b', { y: '2' })}`)).toMatchObject({ calls: [{ name: 'b', arguments: '{"y":2}' }], remainingText: cut });
  });

  // As vLLM's newer parser reads it: a header only at a line's start (review-quoted-tags.test.ts).
  it('keeps a <parameter=key> it quotes mid-line', () => {
    expect(argsOf('<function=w>\n<parameter=content>\nUse <parameter=k> tags\n</parameter>\n</function>')).toEqual({ content: 'Use <parameter=k> tags' });
  });
});

describe('hostile Qwen3-Coder values parse in linear time', () => {
  const MIB = 1024 * 1024;
  // As in qwen-xml.test.ts: two parses of a MiB take 20-150 ms of CPU; a quadratic scan takes seconds.
  // Doubled from 175: beside other jest workers on two cores the thin cases passed it only by luck (a quadratic scan takes seconds).
  const LIMIT_MS = 350;
  const build = (size: number, prefix: string, unit: string, suffix: string): string => (prefix + unit.repeat(Math.ceil(size / unit.length))).slice(0, size - suffix.length) + suffix;
  const OPEN = '<tool_call>\n<function=w>\n<parameter=x>\n';
  const END = '</parameter>\n</function>\n</tool_call>';
  // A `</parameter>` that ends a value well (a header follows), after half the text in spaces,
  // which the values left open before it all ask about; the call is cut off in the last value.
  const spaced = (size: number): string => `</parameter>${' '.repeat(size / 2)}<parameter=y>`;

  it.each([
    ['</parameter> then prose, in a call', OPEN, '</parameter>x', () => END],
    ['</parameter><parameter=k> repeated', '', '</parameter><parameter=k>', () => ''],
    ['</parameter><parameter=k> repeated, in a call', OPEN, '</parameter>\n<parameter=k>', () => END],
    ['whole parameters quoted in a call', OPEN, '<parameter=k>v</parameter> ', () => END],
    ['whole parameters quoted at line starts, in a call', OPEN, '\n<parameter=k>v</parameter> ', () => END],
    ['whole calls quoted in a call', OPEN, '<tool_call>\n<function=f>\n<parameter=k>\nv\n</parameter>\n</function>\n</tool_call>\n', () => END],
    ['values left open, each before the next call', '', '<function=w>\n<parameter=x>\n1\n', () => ''],
    ['headers with no name end, in a call', OPEN, `<parameter=${'a'.repeat(300)}`, () => END],
    ['calls broken after a value', '', '<function=w><parameter=x>1</parameter>x ', () => ''],
    ['closes then spaces, in a call', OPEN, `</parameter>${' '.repeat(64)}x`, () => END],
    ['values left open, sharing one far </parameter>', '<function=w>', '\n<parameter=x>\n1', spaced],
    ['<function= and </parameter> repeated', '', '<function=w><parameter=x></parameter>\n</parameter>', () => ''],
  ])('%s, at 1 MiB and at 4 MiB in four times the time', (_name, prefix, unit, suffix) => {
    for (const [size, limitMs] of [
      [MIB, 2 * LIMIT_MS],
      [DEFAULT_MAX_INPUT_CHARS, 8 * LIMIT_MS],
    ] as const) {
      const text = build(size, prefix, unit, suffix(size));
      expect(text).toHaveLength(size);
      // The 1 MiB step's parses warm the parser for the 4 MiB one (a warm-up there parsed 2 MiB more).
      if (size === MIB) for (let i = 0; i < 8; i++) parseToolCalls(text.slice(0, size / 16), ['other']);
      const parse = (input: string) => (): void => {
        parseToolCalls(input);
        parseToolCalls(input, ['other']);
      };
      // Past the limit, held to 8x the same input a quarter as long (a quadratic scan takes 16x).
      expect(slowerThan(parse(text), parse(build(size / 4, prefix, unit, suffix(size / 4))), 8, limitMs)).toBeUndefined();
    }
  });

  // The rule is GLM's too (one helper): values left open sharing one far `</arg_value>` took 16 s a MiB.
  it('GLM values left open, sharing one far </arg_value>, at 1 MiB and at 4 MiB in four times the time', () => {
    for (const [size, limitMs] of [
      [MIB, 2 * LIMIT_MS],
      [DEFAULT_MAX_INPUT_CHARS, 8 * LIMIT_MS],
    ] as const) {
      const glm = (length: number): string => build(length, '<tool_call>w', '<arg_key>x</arg_key><arg_value>1', `</arg_value>${' '.repeat(length / 2)}<arg_key>y</arg_key><arg_value>`);
      const text = glm(size);
      expect(text).toHaveLength(size);
      const quarter = glm(size / 4);
      // Past the limit, held to 8x the same input a quarter as long (a quadratic scan takes 16x).
      expect(slowerThan(() => parseToolCalls(text), () => parseToolCalls(quarter), 8, limitMs)).toBeUndefined();
    }
  });
});

describe('through the ParseToolCalls RPC', () => {
  const app = writeFileApp();

  it('a file whose text spells the tags is parsed whole and reaches the tool as written', async () => {
    const d = app.d();
    const tools = app.tools();
    const content = '<qwen>\n  <close>"</parameter>" ends a value</close>\n  <end></function></end>\n  <open><parameter=</open>\n</qwen>';
    const text = `I will write it.\n${qwenCall('write_file', { path: 'x.xml', content })}`;
    const reply = await d.dispatch.parseToolCalls({ text, offeredTools: ['write_file'] });
    expect(reply.format).toBe('qwen_xml');
    expect(reply.remainingText).toBe('I will write it.');
    expect(reply.calls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([['write_file', { path: 'x.xml', content }]]);
    const { results } = await d.dispatch.dispatch({ sessionId: 'qwen-values', calls: reply.calls.map(({ id, name, arguments: args }) => ({ id, name, arguments: args })) });
    expect(results.map((r) => [r.isError, r.output])).toEqual([[false, JSON.stringify({ path: 'x.xml', content })]]);
    expect(tools.received.map((r) => [r.path, r.body.arguments])).toEqual([['/write', { path: 'x.xml', content }]]);
  });
});
