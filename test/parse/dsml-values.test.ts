import { DEFAULT_MAX_INPUT_CHARS, parseToolCalls } from '../../src/parse';
import { slowerThan } from '../helpers/cpu-time';
import { argsOf, callsOf, expectNoCalls } from './parse-helpers';
import { writeFileApp } from './write-file-app';

/** A DSML tag with DeepSeek's fullwidth bars (U+FF5C): `<｜DSML｜invoke`, `</｜DSML｜parameter>`. */
const tag = (name: string): string => `<\uff5cDSML\uff5c${name}`;
const closing = (name: string): string => `</\uff5cDSML\uff5c${name}>`;
const BEGIN = `${tag('function_calls')}>`;
const END = closing('function_calls');
const PARAM_CLOSE = closing('parameter');
const INVOKE_CLOSE = closing('invoke');
const header = (key: string, string = true): string => `${tag('parameter')} name="${key}" string="${string}">`;
const param = (key: string, value: string, string = true): string => `${header(key, string)}${value}${PARAM_CLOSE}`;
/** A call as DeepSeek V3.2's encoding (`encoding_dsv32.py`) writes it: each parameter on a line of its own, values as written. */
const invoke = (name: string, params: Record<string, string>): string =>
  `${tag('invoke')} name="${name}">\n${Object.entries(params).map(([key, value]) => `${param(key, value)}\n`).join('')}${INVOKE_CLOSE}`;
const block = (...calls: string[]): string => `${BEGIN}\n${calls.join('\n')}\n${END}`;

/**
 * A value holds raw text (a file a tool writes, code), which may spell DSML's own tags: DeepSeek's
 * encoding writes a `string="true"` value as it is, unescaped. A value ends at the
 * `</｜DSML｜parameter>` that the next parameter's header, `</｜DSML｜invoke>` or
 * `</｜DSML｜function_calls>` follows, so a value quoting `</｜DSML｜parameter>` is read whole
 * instead of the call being lost.
 */
describe("a DSML value that spells the format's tags", () => {
  it('keeps </｜DSML｜parameter> in an XML file it writes, before or after the other parameters', () => {
    const xml = `<?xml version="1.0"?>\n<case>\n  <expect>${PARAM_CLOSE}</expect>\n  <args>3</args>\n</case>\n`;
    expect(argsOf(block(invoke('write_file', { path: 'case.xml', content: xml })))).toEqual({ path: 'case.xml', content: xml });
    expect(argsOf(block(invoke('write_file', { content: xml, path: 'case.xml' })))).toEqual({ content: xml, path: 'case.xml' });
    expect(parseToolCalls(`Writing it.\n\n${block(invoke('write_file', { content: xml }))}`)).toMatchObject({
      calls: [{ name: 'write_file', arguments: JSON.stringify({ content: xml }) }],
      remainingText: 'Writing it.',
      format: 'deepseek_dsml',
    });
  });

  it('keeps the closing tags, with either bars, in HTML and code it writes', () => {
    const html = `<p>A value ends at <code>${PARAM_CLOSE}</code>, a call at <code>${INVOKE_CLOSE}</code>.</p>\n<p>Done.</p>`;
    expect(argsOf(invoke('write_file', { path: 'tags.html', content: html }))).toEqual({ path: 'tags.html', content: html });
    const py = 'PARAM_CLOSE = "</|DSML|parameter>"\nprint(PARAM_CLOSE)\nprint("</|DSML|invoke>")';
    expect(argsOf(block(invoke('write_file', { content: py, path: 'tags.py' })).replaceAll('\uff5c', '|'))).toEqual({ content: py, path: 'tags.py' });
    const mixed = `const close = ['${PARAM_CLOSE}', '</|DSML|parameter>'];`;
    expect(argsOf(invoke('write_file', { content: mixed, path: 'tags.ts' }))).toEqual({ content: mixed, path: 'tags.ts' });
  });

  it('keeps a file whose last line is the closing tag, and one quoting it twice', () => {
    const last = `<doc>\n${PARAM_CLOSE}`;
    expect(argsOf(invoke('write_file', { content: last, path: 'd.xml' }))).toEqual({ content: last, path: 'd.xml' });
    const twice = `a${PARAM_CLOSE}b${PARAM_CLOSE}\tc`;
    expect(argsOf(`${tag('invoke')} name="w">${param('x', twice)}${INVOKE_CLOSE}`)).toEqual({ x: twice });
  });

  it("does not take another dialect's call quoted after the closing tag for a call", () => {
    const doc = `DSML ends a value at ${PARAM_CLOSE}; Hermes writes <tool_call>{"name":"rm","arguments":{"path":"/"}}</tool_call>.`;
    expect(parseToolCalls(block(invoke('write_file', { content: doc, path: 'formats.md' })), ['write_file', 'rm'])).toMatchObject({
      calls: [{ name: 'write_file', arguments: JSON.stringify({ content: doc, path: 'formats.md' }) }],
      remainingText: '',
      format: 'deepseek_dsml',
    });
  });

  it('keeps a whole parameter it quotes', () => {
    const doc = `DeepSeek writes ${param('city', 'Paris')} for each argument.`;
    expect(argsOf(block(invoke('write_file', { content: doc, path: 'dsml.md' })))).toEqual({ content: doc, path: 'dsml.md' });
  });
});

describe('a DSML call broken after a value', () => {
  it('does not swallow the call after it', () => {
    const broken = `${tag('invoke')} name="a">\n${param('x', '1')}\nprose\n${INVOKE_CLOSE}`;
    const next = block(invoke('b', { y: 'two' }));
    expect(parseToolCalls(`${broken}\n${next}`)).toMatchObject({ calls: [{ name: 'b', arguments: '{"y":"two"}' }], remainingText: broken, format: 'deepseek_dsml' });
    const cut = `${BEGIN}\n${tag('invoke')} name="a">\n${param('x', '1')}\nprose`;
    expect(parseToolCalls(`${cut}\n${next}`)).toMatchObject({ calls: [{ name: 'b', arguments: '{"y":"two"}' }], remainingText: cut });
  });

  it('does not take prose after a value for its text', () => {
    expectNoCalls(block(`${tag('invoke')} name="a">\n${param('x', '1')}\nprose\n${INVOKE_CLOSE}`));
    expectNoCalls(block(`${tag('invoke')} name="a">\n${param('x', '1')}\nprose\n${param('y', '2')}\n${INVOKE_CLOSE}`));
    expectNoCalls(`${tag('invoke')} name="a">\n${param('x', '1')}\nprose`);
  });

  it('does not run past </｜DSML｜function_calls>', () => {
    expectNoCalls(`${BEGIN}\n${tag('invoke')} name="a">\n${param('x', '1')}\n${END}\nprose ${PARAM_CLOSE}\n${INVOKE_CLOSE}`);
  });
});

/** README: a value whose closing tag the model left out ends as a GLM value left open ends. */
describe('a DSML value left open (as before)', () => {
  it('ends at the next parameter or at </｜DSML｜invoke>', () => {
    expect(argsOf(`${tag('invoke')} name="a">\n${header('x')}1\n${param('y', 'two')}\n${INVOKE_CLOSE}`)).toEqual({ x: '1\n', y: 'two' });
    expect(argsOf(`${tag('invoke')} name="a">\n${header('x', false)}1\n${INVOKE_CLOSE}`)).toEqual({ x: 1 });
  });

  it('never runs past another call', () => {
    const prose = `Write ${tag('invoke')} name="NAME">\n${header('KEY')}VALUE`;
    expect(parseToolCalls(`${prose}\n${block(invoke('b', { y: 'two' }))}`)).toMatchObject({ calls: [{ name: 'b', arguments: '{"y":"two"}' }], remainingText: prose });
  });
});

describe('hostile DSML values parse in linear time', () => {
  const MIB = 1024 * 1024;
  // Two parses of a MiB take 35-250 ms of CPU here (each DSML header's attributes are read up to
  // three times), more beside other jest workers on two cores (3 of 11 passed the bound of 175
  // ms per parse so); a quadratic scan takes seconds to minutes.
  const LIMIT_MS = 350;
  const build = (size: number, prefix: string, unit: string, suffix: string): string => (prefix + unit.repeat(Math.ceil(size / unit.length))).slice(0, size - suffix.length) + suffix;
  const OPEN = `${BEGIN}\n${tag('invoke')} name="w">\n${header('x')}`;
  const CLOSE = `${PARAM_CLOSE}\n${INVOKE_CLOSE}\n${END}`;
  // A closing tag that ends a value well (a header follows), after half the text in spaces, which
  // the values left open before it all ask about; the call is cut off in the last value.
  const spaced = (size: number): string => `${PARAM_CLOSE}${' '.repeat(size / 2)}${header('y')}`;

  it.each([
    ['closing tags then prose, in a call', OPEN, `${PARAM_CLOSE}x`, () => CLOSE],
    ['closing tags then headers, repeated', '', `${PARAM_CLOSE}${header('k')}`, () => ''],
    ['closing tags then headers, repeated, in a call', OPEN, `${PARAM_CLOSE}\n${header('k')}`, () => CLOSE],
    ['whole parameters quoted in a call', OPEN, `${param('k', 'v')} `, () => CLOSE],
    ['headers never closed, in a call', OPEN, `${PARAM_CLOSE}${tag('parameter')} name="${'a'.repeat(300)}`, () => CLOSE],
    ['headers with a 1 KiB attribute, in a call', OPEN, `${PARAM_CLOSE} ${tag('parameter')} n${'a'.repeat(1100)}`, () => CLOSE],
    ['calls broken after a value', '', `${tag('invoke')} name="w">${param('x', '1')}x `, () => ''],
    ['closes then spaces, in a call', OPEN, `${PARAM_CLOSE}${' '.repeat(64)}x`, () => CLOSE],
    ['values left open, sharing one far closing tag', `${tag('invoke')} name="w">`, `\n${header('x')}1`, spaced],
    ['invokes and closing tags repeated', '', `${tag('invoke')} name="w">${header('x')}${PARAM_CLOSE}\n${PARAM_CLOSE}`, () => ''],
    ['both bars mixed, in a call', OPEN, `${PARAM_CLOSE}x</|DSML|parameter>\n</|DSML|parameter>y`, () => CLOSE],
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
});

describe('through the ParseToolCalls RPC', () => {
  const app = writeFileApp();

  it('a file whose text spells the tags is parsed whole and reaches the tool as written', async () => {
    const d = app.d();
    const tools = app.tools();
    const content = `<dsml>\n  <close>"${PARAM_CLOSE}" ends a value</close>\n  <end>${INVOKE_CLOSE}</end>\n  <ascii></|DSML|parameter></ascii>\n</dsml>\n`;
    const text = `I will write it.\n\n${block(invoke('write_file', { path: 'x.xml', content }))}`;
    const reply = await d.dispatch.parseToolCalls({ text, offeredTools: ['write_file'] });
    expect(reply.format).toBe('deepseek_dsml');
    expect(reply.remainingText).toBe('I will write it.');
    expect(reply.calls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([['write_file', { path: 'x.xml', content }]]);
    const { results } = await d.dispatch.dispatch({ sessionId: 'dsml-values', calls: reply.calls.map(({ id, name, arguments: args }) => ({ id, name, arguments: args })) });
    expect(results.map((r) => [r.isError, r.output])).toEqual([[false, JSON.stringify({ path: 'x.xml', content })]]);
    expect(tools.received.map((r) => [r.path, r.body.arguments])).toEqual([['/write', { path: 'x.xml', content }]]);
  });
});
