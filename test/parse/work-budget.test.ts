import { callsOf } from './parse-helpers';

/** A fenced JSON sample of `rows` rows, abbreviated with "..." as models do, then a fenced call. */
function sampleThenCall(rows: number): string {
  const lines = Array.from({ length: rows }, (_, i) => `  {"id": ${i}, "title": "row ${i}", "tags": ["a", "b"]}`);
  const sample = '```json\n{"rows": [\n' + lines.join(',\n') + ',\n  ...\n]}\n```\n';
  return `Here is the data I fetched:\n${sample}Now I will save it.\n\`\`\`json\n{"name":"save","arguments":{"path":"out.json"}}\n\`\`\``;
}

const unterminated = (chars: number): string => `"${'x'.repeat(chars)}}}`;

describe('one broken span of honest input leaves the budget for the valid calls after it', () => {
  it.each([1_500, 5_000])('a fenced sample of %i rows ending in "..." before a fenced call', (rows) => {
    expect(sampleThenCall(rows).length).toBeGreaterThan(80_000);
    expect(callsOf(sampleThenCall(rows))).toEqual([['save', '{"path":"out.json"}']]);
  });

  it.each([50_000, 300_000])('a <tool_call> with an unterminated %i-character string', (chars) => {
    const text = `<tool_call>{"name":"write","arguments":{"content":${unterminated(chars)}\n</tool_call>\n<tool_call>{"name":"ok","arguments":{}}</tool_call>`;
    expect(callsOf(text)).toEqual([['ok', '{}']]);
  });

  it('a <tool_call> whose dropped brace is recovered at its closing tag, then another', () => {
    const content = 'x'.repeat(100_000);
    const text = `<tool_call>{"name":"write","arguments":{"content":"${content}"}</tool_call>\n<tool_call>{"name":"ok","arguments":{}}</tool_call>`;
    expect(callsOf(text)).toEqual([
      ['write', JSON.stringify({ content })],
      ['ok', '{}'],
    ]);
  });

  it.each([
    ['[TOOL_CALLS] arrays', (s: string) => `[TOOL_CALLS][{"name":"write","arguments":{"content":${s}]\n[TOOL_CALLS][{"name":"ok","arguments":{}}]`],
    ['[TOOL_CALLS] name[ARGS]', (s: string) => `[TOOL_CALLS]write[ARGS]{"content":${s}\n[TOOL_CALLS]ok[ARGS]{}`],
    ['<function=> tags', (s: string) => `<function=write>{"content":${s}</function>\n<function=ok>{}</function>`],
    ['<|python_tag|>', (s: string) => `<|python_tag|>{"name":"write","parameters":{"content":${s}}<|eom_id|>\n<|python_tag|>{"name":"ok","parameters":{}}`],
    ['harmony messages', (s: string) => `<|channel|>commentary to=functions.write<|message|>{"content":${s}<|call|>\n<|channel|>commentary to=functions.ok<|message|>{}<|call|>`],
    ['DeepSeek calls', (s: string) => `<\uff5ctool\u2581call\u2581begin\uff5c>write<\uff5ctool\u2581sep\uff5c>{"content":${s}<\uff5ctool\u2581call\u2581begin\uff5c>ok<\uff5ctool\u2581sep\uff5c>{}`],
    ['Kimi calls', (s: string) => `<|tool_call_begin|>functions.write:0<|tool_call_argument_begin|>{"content":${s}<|tool_call_end|><|tool_call_begin|>functions.ok:1<|tool_call_argument_begin|>{}<|tool_call_end|>`],
  ])('%s with an unterminated 300,000-character string first', (_label, write) => {
    expect(callsOf(write(unterminated(300_000)))).toEqual([['ok', '{}']]);
  });

  it('a DSML call whose 300,000-character value was never closed, then another', () => {
    const open = `<\uff5cDSML\uff5cinvoke name="write">\n<\uff5cDSML\uff5cparameter name="content" string="true">${'x'.repeat(300_000)}\n`;
    expect(callsOf(`${open}<\uff5cDSML\uff5cinvoke name="ok">\n</\uff5cDSML\uff5cinvoke>`)).toEqual([['ok', '{}']]);
  });
});
