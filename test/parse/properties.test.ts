import fc from 'fast-check';
import { parseToolCalls, type ParseResult } from '../../src/parse';

const FORMATS = ['hermes', 'llama', 'mistral', 'openai', 'markdown', 'qwen_xml', 'glm_xml', 'harmony', 'deepseek', 'deepseek_dsml', 'minimax_xml', 'anthropic_xml', 'pythonic', 'gemma', 'kimi', 'kimi_xtml', 'tool_code', 'functionary', 'react', 'react_json', 'none'];
const TOKENS = [
  '{', '}', '[', ']', '"', "'", ':', ',', '\\', '\n', ' ', '```', '```json\n', 'name', '"name"', '"arguments"',
  '"parameters"', '"function"', '"tool_calls"', 'get_weather', '"get_weather"', '[TOOL_CALLS]', '[ARGS]', '[CALL_ID]',
  '<tool_call>', '</tool_call>', '<|python_tag|>', '<|eom_id|>', '<function=', '</function>', '>', '<think>',
  '<parameter=', '</parameter>', 'city', '3',
  '</think>', 'True', 'None', '1e5', '-0', '\u2028', '\ud800', '😀',
  '<arg_key>', '</arg_key>', '<arg_value>', '</arg_value>', '<|start|>assistant', '<|channel|>', 'commentary',
  ' to=functions.get_weather', ' to=browser.search', 'analysis', '<|constrain|>json', '<|message|>', '<|call|>', '<|end|>',
  '<\uff5ctool\u2581calls\u2581begin\uff5c>', '<\uff5ctool\u2581call\u2581begin\uff5c>', '<\uff5ctool\u2581sep\uff5c>',
  '<\uff5ctool\u2581call\u2581end\uff5c>', '<|tool\u2581call\u2581begin|>', '<|tool\u2581sep|>', 'function',
  '<|tool_calls_section_begin|>', '<|tool_call_begin|>', 'functions.get_weather:0', '<|tool_call_argument_begin|>',
  '<|tool_call_end|>', '<\uff5cDSML\uff5cfunction_calls>', '<\uff5cDSML\uff5cinvoke', '<|DSML|invoke', ' name="get_weather"',
  '<\uff5cDSML\uff5cparameter', ' name="city"', ' string="true"', ' string="false"', '</\uff5cDSML\uff5cparameter>',
  '</\uff5cDSML\uff5cinvoke>', '</|DSML|invoke>',
];

const tokenSoup = fc.array(fc.constantFrom(...TOKENS), { maxLength: 60 }).map((tokens) => tokens.join(''));
const anyText = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.string({ unit: 'grapheme' }),
  tokenSoup,
  fc.json(),
);

/** Parses, failing the test if the last-resort catch inside the parser fired. */
function parseStrictly(text: string, offered: readonly string[] = []): ParseResult {
  const errors: unknown[] = [];
  const result = parseToolCalls(text, offered, { onInternalError: (error) => errors.push(error) });
  expect(errors).toEqual([]);
  return result;
}

/** Invariants every result must satisfy, whatever the input. */
function expectWellFormed(text: string, result: ParseResult, offered: readonly string[]): void {
  expect(FORMATS).toContain(result.format);
  expect(typeof result.remainingText).toBe('string');
  expect(result.remainingText.length).toBeLessThanOrEqual(text.length);
  if (result.format === 'none') {
    expect(result.calls).toEqual([]);
    expect(result.remainingText).toBe(text.trim());
  } else {
    expect(result.calls.length).toBeGreaterThan(0);
  }
  const ids = new Set(result.calls.map((call) => call.id));
  expect(ids.size).toBe(result.calls.length);
  for (const call of result.calls) {
    expect(call.id.length).toBeGreaterThan(0);
    expect(call.name.length).toBeGreaterThan(0);
    expect(typeof call.arguments).toBe('string');
    if (offered.length > 0) expect(offered).toContain(call.name);
  }
}

describe('parseToolCalls is total', () => {
  it('never throws and returns a well-formed result for any text', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        expectWellFormed(text, parseStrictly(text), []);
      }),
      { numRuns: 2000 },
    );
  });

  it('returns only offered tools, whatever the text', () => {
    const offered = fc.array(fc.constantFrom('get_weather', 'name', 'a', 'search'), { minLength: 1, maxLength: 3 });
    fc.assert(
      fc.property(anyText, offered, (text, tools) => {
        expectWellFormed(text, parseStrictly(text, tools), tools);
      }),
      { numRuns: 1000 },
    );
  });

  it('reports an internal error to the hook and still answers none', () => {
    const errors: unknown[] = [];
    const hostile = {
      get maxCalls(): number {
        throw new Error('boom');
      },
      onInternalError: (error: unknown) => errors.push(error),
    };
    expect(parseToolCalls(' <tool_call>{"name":"a"}</tool_call> ', [], hostile)).toEqual({
      calls: [],
      remainingText: '<tool_call>{"name":"a"}</tool_call>',
      format: 'none',
    });
    expect(errors).toHaveLength(1);
  });

  it('tolerates inputs outside its type (JavaScript callers)', () => {
    const loose = parseToolCalls as (text: unknown, offered?: unknown) => ParseResult;
    for (const input of [undefined, null, 42, {}, ['<tool_call>']]) {
      expect(loose(input, 'not-an-array')).toEqual({ calls: [], remainingText: '', format: 'none' });
    }
  });
});
