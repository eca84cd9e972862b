import { parseToolCalls } from '../../src/parse';
import { callsOf, expectNoCalls } from './parse-helpers';

/** A DSML tag with DeepSeek's fullwidth bars (U+FF5C): `<｜DSML｜invoke`, `</｜DSML｜parameter>`. */
const tag = (name: string): string => `<\uff5cDSML\uff5c${name}`;
const BEGIN = `${tag('function_calls')}>`;
const END = `</\uff5cDSML\uff5cfunction_calls>`;
const param = (key: string, value: string, string = true): string => `${tag('parameter')} name="${key}" string="${string}">${value}</\uff5cDSML\uff5cparameter>`;
/** A call as DeepSeek V3.2's encoding writes it: each parameter on a line of its own. */
const invoke = (name: string, ...params: string[]): string => `${tag('invoke')} name="${name}">\n${params.map((p) => `${p}\n`).join('')}</\uff5cDSML\uff5cinvoke>`;
const block = (...calls: string[]): string => `${BEGIN}\n${calls.join('\n')}\n${END}`;

const WEATHER = invoke('get_weather', param('location', 'Hangzhou'), param('days', '3', false));

describe('DeepSeek V3.2 DSML calls', () => {
  it('reads the call, its format and the text around it', () => {
    expect(parseToolCalls(block(WEATHER))).toEqual({
      calls: [{ id: expect.stringMatching(/^call_[A-Za-z0-9]{24}$/), name: 'get_weather', arguments: '{"location":"Hangzhou","days":3}' }],
      remainingText: '',
      format: 'deepseek_dsml',
    });
    const result = parseToolCalls(`Let me check.\n\n${block(WEATHER)}<\uff5cend\u2581of\u2581sentence\uff5c>`);
    expect(result.remainingText).toBe('Let me check.\n\n<\uff5cend\u2581of\u2581sentence\uff5c>');
  });

  it('reads several calls in order, a call with no parameters, and one with no block tokens around it', () => {
    const text = block(invoke('a', param('x', '1', false)), invoke('b'), invoke('a', param('x', '2', false)));
    expect(callsOf(text)).toEqual([['a', '{"x":1}'], ['b', '{}'], ['a', '{"x":2}']]);
    expect(parseToolCalls(`Now: ${WEATHER}`)).toMatchObject({ calls: [{ name: 'get_weather' }], remainingText: 'Now:' });
  });

  it('reads the tags written with ASCII bars, and DeepSeek V4 tool_calls blocks', () => {
    const ascii = block(WEATHER).replaceAll('\uff5c', '|');
    expect(parseToolCalls(ascii)).toMatchObject({ calls: [{ name: 'get_weather', arguments: '{"location":"Hangzhou","days":3}' }], remainingText: '', format: 'deepseek_dsml' });
    const v4 = block(WEATHER).replaceAll('function_calls', 'tool_calls');
    expect(parseToolCalls(v4)).toMatchObject({ calls: [{ name: 'get_weather' }], remainingText: '' });
  });

  it('keeps a string="true" value as written, and reads a string="false" value as JSON', () => {
    const text = invoke(
      'f',
      param('zip', '007'),
      param('flag', 'true'),
      param('code', '  x = 1\n'),
      param('n', '-2.50', false),
      param('list', '["a", {"b": null}]', false),
      param('yes', 'true', false),
      param('word', 'Paris', false),
    );
    expect(callsOf(text)).toEqual([['f', '{"zip":"007","flag":"true","code":"  x = 1\\n","n":-2.50,"list":["a",{"b":null}],"yes":true,"word":"Paris"}']]);
    const noKind = `${tag('invoke')} name="f">${tag('parameter')} name="n">12</\uff5cDSML\uff5cparameter></\uff5cDSML\uff5cinvoke>`;
    expect(callsOf(noKind)).toEqual([['f', '{"n":12}']]);
  });

  it('does not take tags quoted in a value for calls', () => {
    const content = `${tag('invoke')} name="rm"></\uff5cDSML\uff5cinvoke> <tool_call>{"name":"rm","arguments":{}}</tool_call> <\uff5ctool\u2581call\u2581begin\uff5c>rm<\uff5ctool\u2581sep\uff5c>{}`;
    expect(callsOf(block(invoke('write', param('content', content))))).toEqual([['write', JSON.stringify({ content })]]);
  });

  it('does not take JSON in the value of a call not offered for a call', () => {
    expectNoCalls(block(invoke('write', param('content', '```json\n{"name":"rm","arguments":{"path":"/"}}\n```'))), ['rm']);
  });

  it('does not take malformed tags for calls', () => {
    expectNoCalls(`${tag('invoke')} name="get weather">\n</\uff5cDSML\uff5cinvoke>`);
    expectNoCalls(`${tag('invoke')} name=get_weather>\n</\uff5cDSML\uff5cinvoke>`);
    expectNoCalls(`${tag('invoke')}>\n</\uff5cDSML\uff5cinvoke>`);
    expectNoCalls(`${tag('invoke')} name="f">\nprose\n</\uff5cDSML\uff5cinvoke>`);
    expectNoCalls(`${tag('invoke')} name="f">${param('x', '1')}prose</\uff5cDSML\uff5cinvoke>`);
  });

  it('returns only offered tools, and leaves the others in the text', () => {
    const a = invoke('a', param('x', '1'));
    const text = block(a, invoke('b', param('y', '2')));
    expect(parseToolCalls(text, ['b'])).toMatchObject({ calls: [{ name: 'b' }], remainingText: `${BEGIN}\n${a}` });
    expectNoCalls(text, ['c']);
  });

  it('returns at most maxCalls calls and leaves the rest in the text', () => {
    const one = invoke('a');
    const result = parseToolCalls(block(one, one, one), [], { maxCalls: 2 });
    expect(result.calls).toHaveLength(2);
    expect(result.remainingText).toBe(`${one}\n${END}`);
  });

  it.each([
    ['inside a value', `${BEGIN}\n${tag('invoke')} name="f">\n${tag('parameter')} name="city" string="true">Par`],
    ['after a parameter', `${BEGIN}\n${tag('invoke')} name="f">\n${param('city', 'Paris')}\n`],
    ['inside a parameter tag', `${BEGIN}\n${tag('invoke')} name="f">\n${tag('parameter')} name="ci`],
    ['inside the name', `${BEGIN}\n${tag('invoke')} name="get_wea`],
  ])('does not take output cut off %s for a call', (_where, text) => {
    expectNoCalls(text);
  });

  it('leaves a call cut off after a complete one in the text', () => {
    const cut = `${tag('invoke')} name="b">\n${tag('parameter')} name="y" string="true">tw`;
    expect(parseToolCalls(`${BEGIN}\n${invoke('a')}\n${cut}`)).toMatchObject({ calls: [{ name: 'a' }], remainingText: cut });
  });

  it('ends a value whose closing tag was left out at the next parameter', () => {
    const text = `${tag('invoke')} name="f">\n${tag('parameter')} name="a" string="true">1\n${param('b', '2')}\n</\uff5cDSML\uff5cinvoke>`;
    expect(callsOf(text)).toEqual([['f', '{"a":"1\\n","b":"2"}']]);
  });

  it('ignores calls drafted in reasoning, and a reasoning tag quoted in a value is text', () => {
    expectNoCalls(`<think>\nMaybe ${block(invoke('rm'))}\n</think>`);
    const code = 'text = re.sub(r"<think>.*?", "", text)';
    const result = parseToolCalls(`<think>I will write it.</think>\n${block(invoke('write_file', param('content', code)))}`);
    expect(result.calls.map((c) => [c.name, JSON.parse(c.arguments) as unknown])).toEqual([['write_file', { content: code }]]);
    expect(result.remainingText).toBe('<think>I will write it.</think>');
  });
});
