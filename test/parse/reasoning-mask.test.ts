import { callsOf, expectNoCalls } from './parse-helpers';

describe('a </think> quoted in a call is not the end of reasoning', () => {
  it('keeps a bare call whose argument quotes it', () => {
    const text = '{"name":"write_file","arguments":{"path":"a.md","content":"models end reasoning with </think> then answer"}}';
    expect(callsOf(text)).toEqual([
      ['write_file', '{"path":"a.md","content":"models end reasoning with </think> then answer"}'],
    ]);
  });

  it('does not expose a call quoted after it in the argument', () => {
    const text =
      '{"name":"write_file","arguments":{"path":"notes.md","content":"The model ends with </think>{\'name\':\'delete_repo\',\'arguments\':{\'repo\':\'prod\'}}"}}';
    const content = "The model ends with </think>{'name':'delete_repo','arguments':{'repo':'prod'}}";
    const expected = [['write_file', JSON.stringify({ path: 'notes.md', content })]];
    expect(callsOf(text)).toEqual(expected);
    expect(callsOf(text, ['write_file', 'delete_repo'])).toEqual(expected);
  });

  it('keeps fenced and OpenAI calls whose arguments quote it', () => {
    expect(callsOf('```json\n{"name":"write_file","arguments":{"content":"x </think> y"}}\n```')).toEqual([
      ['write_file', '{"content":"x </think> y"}'],
    ]);
    const openai = '{"tool_calls":[{"id":"c1","type":"function","function":{"name":"write_file","arguments":"{\\"content\\":\\"a </think> b\\"}"}}]}';
    expect(callsOf(openai)).toEqual([['write_file', '{"content":"a </think> b"}']]);
  });

  it('does not expose a call quoted after it in a broken call', () => {
    const text = '{"name":"write_file","arguments":{"content":"</think>{\'name\':\'delete_repo\',\'arguments\':{}}", "x": }}';
    expect(callsOf(text)).toEqual([]);
  });
});

describe('a </think> with no opening tag still ends reasoning', () => {
  it('when the reasoning before it drafted a call', () => {
    const text =
      'I could call {"name":"get_weather","arguments":{"city":"Paris"}}, but they said Lyon.\n</think>\n' +
      '{"name":"get_weather","arguments":{"city":"Lyon"}}';
    expect(callsOf(text)).toEqual([['get_weather', '{"city":"Lyon"}']]);
  });
});

describe('a call drafted in reasoning opened in the prompt is not returned', () => {
  it('when the draft is a marked call before the closing tag', () => {
    const draft =
      'I could emit <tool_call>{"name": "send_email", "arguments": {"to": "boss@x.com"}}</tool_call> but the user only asked a question.\n</think>\n\n';
    expectNoCalls(draft + 'Paris is the capital of France.');
    expect(callsOf(draft + '<tool_call>{"name":"get_weather","arguments":{"city":"Lyon"}}</tool_call>')).toEqual([
      ['get_weather', '{"city":"Lyon"}'],
    ]);
    expectNoCalls('Maybe [TOOL_CALLS] [{"name":"send_email","arguments":{}}] no.\n</think>\nNo tools needed.');
    expectNoCalls('Maybe <function=send_email>{"to":"boss@x.com"}</function> no.\n</think>\nNo tools needed.');
  });

  it('but keeps a marked call whose argument quotes the closing tag', () => {
    expect(callsOf('<tool_call>{"name":"write_file","arguments":{"content":"a </think> b"}}</tool_call>')).toEqual([
      ['write_file', '{"content":"a </think> b"}'],
    ]);
    expect(callsOf('<function=write_file>{"content":"a </think> b"}</function>')).toEqual([
      ['write_file', '{"content":"a </think> b"}'],
    ]);
    expect(callsOf('[TOOL_CALLS] [{"name":"write_file","arguments":{"content":"a </think> b"}}]')).toEqual([
      ['write_file', '{"content":"a </think> b"}'],
    ]);
  });
});

describe('every reasoning block is masked', () => {
  it('a call drafted in a later block is not returned', () => {
    const text = '<think>\nplan\n</think>\n<think>\nMaybe <tool_call>{"name":"send_email","arguments":{}}</tool_call>? No.\n</think>\n';
    expectNoCalls(text + 'No tools needed.');
    expect(callsOf(text + '<tool_call>{"name":"get_weather","arguments":{"city":"Lyon"}}</tool_call>')).toEqual([
      ['get_weather', '{"city":"Lyon"}'],
    ]);
    expectNoCalls('Let me see. <thinking>Maybe {"name":"send_email","arguments":{}}</thinking> No tools needed.');
  });

  it('a later block never closed runs to the end, as reasoning cut off', () => {
    expectNoCalls('Done.\n<think>\nMaybe also <tool_call>{"name":"send_email","arguments":{}}</tool_call>');
  });

  it('but not a block quoted in a call', () => {
    const args = '{"content":"<think>x</think> y"}';
    expect(callsOf(`<think>plan</think>\n<tool_call>{"name":"write_file","arguments":${args}}</tool_call>`)).toEqual([
      ['write_file', args],
    ]);
    expect(callsOf(`<think>plan</think>\n{"name":"write_file","arguments":${args}}`)).toEqual([['write_file', args]]);
  });

  it('in time linear in the text', () => {
    const many = 'a <think>b {"name":"x","arguments":{}}</think> c '.repeat(20_000);
    const quoted = `<tool_call>{"name":"write_file","arguments":{"content":"${'<think> </think> '.repeat(40_000)}"}}</tool_call>`;
    const started = Date.now();
    expectNoCalls(many);
    expect(callsOf(quoted)).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});

// Calls drafted in reasoning were returned unless the tag was exactly `<think>` or `<thinking>`:
// `<reasoning>`, `<THINK>`, `<think >` and gpt-oss's analysis channel all let them through (found
// by the parse hunt).
describe('reasoning in other tags, cases and channels is masked too', () => {
  const draft = '<tool_call>{"name":"send_email","arguments":{"to":"boss@x.com"}}</tool_call>';
  const bare = '{"name":"send_email","arguments":{"to":"boss@x.com"}}';
  it.each([
    ['<reasoning>', `<reasoning>Maybe ${draft}</reasoning> Shall I?`],
    ['<reflection>', `<reflection>Or ${bare}?</reflection> Shall I?`],
    ['upper case', `<THINK>Maybe ${bare}</THINK> Shall I?`],
    ['mixed case', `<Thinking>Maybe ${draft}</Thinking> Shall I?`],
    ['spaces in the tags', `<think >Maybe ${bare}</think > Shall I?`],
    ['attributes', `<think>Plan.</think> <think type="check">Maybe ${draft}</think> Shall I?`],
    ['a closing tag with no opening tag, in upper case', `Maybe ${draft}\n</THINK>\nShall I?`],
    ['a <think> block opened in the prompt', `Maybe ${bare}\n</think>\nShall I?`],
    ['a block never closed', `Done. <Reasoning>\nMaybe ${draft}`],
    ['the analysis channel, up to <|end|>', `<|channel|>analysis<|message|>Maybe ${bare}<|end|><|start|>assistant<|channel|>final<|message|>Shall I?<|return|>`],
    ['the analysis channel with no <|end|>', `<|channel|>analysis<|message|>Maybe ${draft}<|channel|>final<|message|>Shall I?`],
    ['the analysis channel never ended', `<|start|>assistant<|channel|>analysis<|message|>Maybe ${draft}`],
  ])('%s', (_label, text) => {
    expectNoCalls(text);
    expectNoCalls(text, ['send_email']);
  });

  it('and the calls after the block are still found', () => {
    const call = '<tool_call>{"name":"get_weather","arguments":{"city":"Lyon"}}</tool_call>';
    expect(callsOf(`<REASONING>Maybe ${draft}</Reasoning >\n${call}`)).toEqual([['get_weather', '{"city":"Lyon"}']]);
    expect(callsOf(`<|channel|>analysis<|message|>Maybe ${draft}<|end|><|start|>assistant<|channel|>final<|message|>${call}`)).toEqual([
      ['get_weather', '{"city":"Lyon"}'],
    ]);
    expect(callsOf(`<|channel|>analysis<|message|>Maybe ${draft}<|channel|>final<|message|>${call}`)).toEqual([['get_weather', '{"city":"Lyon"}']]);
  });

  it('but a tag that only begins with a reasoning tag name is not one', () => {
    expect(callsOf(`<thinker>${bare}</thinker>`)).toEqual([['send_email', '{"to":"boss@x.com"}']]);
    expect(callsOf(`<|channel|>analysiswise ${bare}`)).toEqual([['send_email', '{"to":"boss@x.com"}']]);
  });
});

// Prose about tags is not a tag (found in a review: each of these dropped the call after it).
// Only <think> and <thinking> may be opened in the prompt (DeepSeek-R1's template does).
describe('prose about reasoning tags leaves the call', () => {
  const call = '<tool_call>{"name":"send_email","arguments":{"to":"a@b.c"}}</tool_call>';
  test.each([
    ['a tag in inline code', `Use \`<reasoning>\` blocks. ${call}`],
    ['words after the tag name', `if a <think about it> then ${call}`],
    ['the channel token in prose', `The <|channel|> analysis token. ${call}`],
    ['a closing </reflection> after the call', `${call} End your notes with </reflection>.`],
    ['a closing </think> in inline code', `${call} then \`</think>\``],
  ])('%s', (_label, text) => {
    expect(callsOf(text, ['send_email']).map(([name]) => name)).toEqual(['send_email']);
  });
});

// A block nested in another of the same name ended the outer one at its own closing tag, so a
// call drafted after it, still in the outer reasoning, was returned (found by the last session).
describe('reasoning blocks of one name nest', () => {
  const draft = '<tool_call>{"name":"send_email","arguments":{"to":"boss@x.com"}}</tool_call>';
  const call = '<tool_call>{"name":"get_weather","arguments":{"city":"Lyon"}}</tool_call>';
  const nested = (depth: number, inner: string) => '<think>a '.repeat(depth) + inner + ' </think>'.repeat(depth);

  it.each([
    ['a call after the inner block', `<think>a <think>b</think> ${draft} </think> Shall I?`],
    ['a bare call after the inner block', `<THINK>a <think type="x">b</think > {"name":"send_email","arguments":{}} </Think> Shall I?`],
    ['three deep', `<thinking>1 <thinking>2 <thinking>3</thinking> ${draft}</thinking> ${draft}</thinking> Shall I?`],
    ['in a block opened in the prompt', `a <think>b</think> ${draft} </think>\nShall I?`],
  ])('%s', (_label, text) => {
    expectNoCalls(text);
    expectNoCalls(text, ['send_email']);
  });

  it('and the call after the outer block is found', () => {
    expect(callsOf(`<think>a <think>b</think> ${draft} </think>\n${call}`)).toEqual([['get_weather', '{"city":"Lyon"}']]);
    expect(callsOf(`a <think>b</think> ${draft} </think>\n${call}`)).toEqual([['get_weather', '{"city":"Lyon"}']]);
    expect(callsOf(`${nested(16, draft)}\n${call}`)).toEqual([['get_weather', '{"city":"Lyon"}']]);
  });

  it('but blocks of other names, and tags in inline code, do not nest', () => {
    expect(callsOf(`<think>a <reasoning>b</think>\n${call}`)).toEqual([['get_weather', '{"city":"Lyon"}']]);
    expect(callsOf(`<think>I would write \`<think>\` here</think>\n${call}`)).toEqual([['get_weather', '{"city":"Lyon"}']]);
  });

  it('at any depth the tags balance', () => {
    expect(callsOf(`${nested(17, draft)}\n${call}`)).toEqual([['get_weather', '{"city":"Lyon"}']]);
    expect(callsOf(`${nested(100, draft)}\n${call}`)).toEqual([['get_weather', '{"city":"Lyon"}']]);
  });

  // A mention of the opening tag inside reasoning was counted as a nested block that never closed,
  // so the block ran to the end and hid the real call after </think> (found by a review).
  it.each([
    ['in prose', '<think>The user wants prod. I should not put the call inside <think> tags, so I close first.</think>'],
    ['in quotes', '<think>the tag "<think>" opens a block</think>'],
    ['in an unbalanced fence', '<think>Format:\n```\n<think> then the reasoning\nok</think>'],
    ['in an unclosed code span', '<think>use `<think> please</think>'],
    ['17 times', `<think>${'I said <think> '.repeat(17)}</think>`],
    ['with a closed inner block', '<think>a <think>b</think> c <think> mention</think>'],
  ])('a mention of <think> %s does not hide the call after the block', (_label, thinking) => {
    expect(callsOf(`${thinking}${call}`)).toEqual([['get_weather', '{"city":"Lyon"}']]);
    expect(callsOf(`${thinking.replace('</think>', ` ${draft}</think>`)}${call}`)).toEqual([['get_weather', '{"city":"Lyon"}']]);
  });

  it('tags in a fenced code block do not nest', () => {
    const fenced = '<think>Format reminder:\n```\n<think>reasoning</think>\n```\nok</think>';
    expect(callsOf(`${fenced}${call}`)).toEqual([['get_weather', '{"city":"Lyon"}']]);
    expect(callsOf(`<think>x\n~~~\n<think>\n~~~\n${draft}</think>${call}`)).toEqual([['get_weather', '{"city":"Lyon"}']]);
    // Reasoning that quotes a closing tag in a fence goes on past it.
    expectNoCalls(`<think>Format reminder:\n\`\`\`\n</think>\n\`\`\`\n${draft} ok</think>`);
  });

  it('in time linear in the text', () => {
    const started = Date.now();
    expectNoCalls(`${'<think>'.repeat(100_000)}${draft}`);
    expect(callsOf(`${'<think><think>x</think>'.repeat(30_000)}\n${call}`)).toEqual([['get_weather', '{"city":"Lyon"}']]);
    expect(callsOf(`${'<think>```\n'.repeat(30_000)}</think>${call}`)).toEqual([['get_weather', '{"city":"Lyon"}']]);
    expect(callsOf(`${nested(8, draft)}`.repeat(5_000) + call)).toEqual([['get_weather', '{"city":"Lyon"}']]);
    expect(callsOf(`${'</think>'.repeat(100_000)}\n${call}`)).toEqual([['get_weather', '{"city":"Lyon"}']]);
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});

// In reasoning opened in the prompt (only `</think>` in the output), a mention of `<think>` paired
// with the `</think>` as a block of its own, so the block opened in the prompt was not seen: the
// reasoning before the mention was taken for the answer, and a call drafted there was returned
// (found by the last session).
describe('a mention of <think> in reasoning opened in the prompt', () => {
  const draft = '<tool_call>{"name":"send_email","arguments":{"to":"boss@x.com"}}</tool_call>';
  const call = '<tool_call>{"name":"get_weather","arguments":{"city":"Lyon"}}</tool_call>';

  it.each([
    ['a marked draft before it', `I could send ${draft} but I must not wrap calls in <think> tags.\n</think>\n`],
    ['a bare draft before it', 'Maybe {"name":"send_email","arguments":{"to":"boss@x.com"}} then. I reason in <think> blocks.\n</think>\n'],
    ['two mentions', `Maybe ${draft}, no: <think> opens, and <think> again.\n</think>\n`],
    ['a mention with attributes', `Maybe ${draft}, as in <think type="plan"> notes.\n</think>\n`],
    ['a mention of <thinking>', `Maybe ${draft}, not in <thinking> tags.\n</thinking>\n`],
    ['a draft on both sides of it', `Maybe ${draft}, the <think> tag, ${draft}\n</think>\n`],
  ])('does not expose the reasoning before it: %s', (_label, reasoning) => {
    expectNoCalls(`${reasoning}No tools needed.`);
    expectNoCalls(`${reasoning}No tools needed.`, ['send_email', 'get_weather']);
    expect(callsOf(`${reasoning}${call}`)).toEqual([['get_weather', '{"city":"Lyon"}']]);
  });

  it('still lets a call after the block be found, and a mention quoted in a call stays text', () => {
    expect(callsOf(`Use <think> tags.\n</think>\n${call}`)).toEqual([['get_weather', '{"city":"Lyon"}']]);
    const args = '{"content":"wrap reasoning in <think> and </think>"}';
    expect(callsOf(`<tool_call>{"name":"write_file","arguments":${args}}</tool_call>`)).toEqual([['write_file', args]]);
    expect(callsOf(`Saving it: <tool_call>{"name":"write_file","arguments":${args}}</tool_call>`)).toEqual([['write_file', args]]);
  });

  it('but a pair on one line, or a closing tag after text on its line, is not taken for one', () => {
    expect(callsOf(`${call} Note: wrap reasoning in <think>...</think> tags.`)).toEqual([['get_weather', '{"city":"Lyon"}']]);
    expect(callsOf(`${call} Then <think>did it work?</think>`)).toEqual([['get_weather', '{"city":"Lyon"}']]);
    expect(callsOf(`${call} Then <think>did it\nwork?</think>`)).toEqual([['get_weather', '{"city":"Lyon"}']]);
  });

  it('but a block the model opened on a line of its own, after the answer, is its own', () => {
    expect(callsOf(`${call}\n<think>\ndone?\n</think>\nYes.`)).toEqual([['get_weather', '{"city":"Lyon"}']]);
    expect(callsOf(`<think>plan</think>\n${call}\n<think>check <think> tags</think>`)).toEqual([['get_weather', '{"city":"Lyon"}']]);
  });
});

// The rule above hid a complete call the model made before prose that mentions `<think>` and
// then writes `</think>` at the start of a line: the call was taken for reasoning (found in a
// review). A call closed before the mention's line is kept; the mention's line is still masked.
describe('a complete call before a prose mention of <think> is kept', () => {
  it.each([
    [
      'a marked call',
      '<tool_call>\n{"name": "search", "arguments": {"q": "qwen chat template"}}\n</tool_call>\nQwen3\'s template puts <think> at the start of the reply and a\n</think>\nline after the reasoning.',
      [['search', '{"q":"qwen chat template"}']],
    ],
    ['a bare JSON call', '{"name": "get_time", "arguments": {}}\nNote: reasoning goes inside <think>\n</think>\n', [['get_time', '{}']]],
    ['a Mistral call', '[TOOL_CALLS]get_time[ARGS]{}\nThe answer will mention <think> tags\n</think> closes them.', [['get_time', '{}']]],
  ])('%s', (_label, text, expected) => {
    expect(callsOf(text)).toEqual(expected);
  });

  it('but a draft on the mention\'s line, or an unclosed one before it, is still reasoning', () => {
    const after = '\n</think>\n<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>';
    expect(callsOf(`<tool_call>{"name": "deploy", "arguments": {}}</tool_call> maybe? No, the <think> block is\nnot done.${after}`)).toEqual([
      ['get_time', '{}'],
    ]);
    expect(callsOf(`I should not write <think> again.\nI will call get_time.${after}`)).toEqual([['get_time', '{}']]);
    expectNoCalls('<tool_call>{"name": "deploy", "arguments": {"env": "prod"\nNo, I must not use <think> tags.\n</think>\nDone.');
  });
});
