import fc from 'fast-check';
import { parseToolCalls } from '../../src/parse';
import { callsOf, expectNoCalls } from './parse-helpers';

// A model output cut off mid-call came back as a complete call, which Dispatch then ran: cut after
// the name or the arguments' `{`, with arguments {} (and the schema's defaults filled in); cut
// after a comma, with a partial recipient list and the later fields dropped (found by the parse
// hunt). Only a missing closing bracket after a complete value is repaired.

describe('a call cut off where more was due is not a call', () => {
  it.each([
    ['after the name', '<tool_call>{"name":"deploy"'],
    ['after the name and a comma', '<tool_call>{"name":"deploy",'],
    ['after the arguments key', '<tool_call>{"name":"deploy","arguments"'],
    ["after the arguments' brace", '<tool_call>{"name":"deploy","arguments":{'],
    ["after the arguments' brace and spaces", '<tool_call>{"name":"deploy","arguments":{\n  '],
    ['after a comma in the arguments', '<tool_call>{"name":"send_email","arguments":{"to":["ceo@x.com"],"subject":"Q3 numbers",'],
    ['after a comma in a list', '<tool_call>{"name":"send_email","arguments":{"to":["ceo@x.com",'],
    ['after the opening of a list', '<tool_call>{"name":"send_email","arguments":{"to":['],
    ["a Llama <function=...> tag, after the arguments' brace", '<function=deploy>{'],
    ['a Llama <function=...> tag, after a comma', '<function=send_email>{"to":["ceo@x.com"],'],
    ["a Mistral array, after the arguments' brace", '[TOOL_CALLS][{"name":"deploy","arguments":{'],
    ['a Mistral array, after the name', '[TOOL_CALLS][{"name":"deploy"'],
    ['a Mistral array, after a comma in a list', '[TOOL_CALLS][{"name":"send_email","arguments":{"subject":"Q3 numbers","to":["ceo@x.com",'],
    ["Mistral name[ARGS], after the brace", '[TOOL_CALLS]deploy[ARGS]{'],
    ['<|python_tag|>, after the name', '<|python_tag|>{"name":"deploy"'],
    ["<|python_tag|>, after the parameters' brace", '<|python_tag|>{"name":"deploy","parameters":{'],
    ["bare JSON, after the arguments' brace", 'Deploying: {"name":"deploy","arguments":{'],
    ['a fence never closed, after a comma', '```json\n{"name":"deploy","arguments":{"env":"staging",'],
    ['an OpenAI call, after the name', '{"tool_calls":[{"id":"c1","type":"function","function":{"name":"deploy"'],
    ['an OpenAI call after a repeated key, after the name', '{"tool_calls":[],"x":1,"tool_calls":[{"id":"c1","function":{"name":"deploy"'],
    // A closing tag is a limit like the end of the text: a brace missing there is supplied only
    // after a complete value, and a call object it closes must have its arguments.
    ['before a closing tag, after the name', '<tool_call>{"name":"deploy"</tool_call>'],
    ["before a closing tag, after the arguments' brace", '<tool_call>{"name":"deploy","arguments":{</tool_call>'],
    ['before a closing tag, after a comma', '<function=send_email>{"to":["ceo@x.com"],</function>'],
  ])('%s', (_label, text) => {
    expectNoCalls(text);
    expectNoCalls(text, ['deploy', 'send_email']);
  });

  it('nor is one cut off before its arguments beside complete calls, whose span keeps its text', () => {
    const array = '[TOOL_CALLS][{"name":"get_time","arguments":{}}, {"name":"deploy"';
    expect(parseToolCalls(array)).toMatchObject({ calls: [{ name: 'get_time', arguments: '{}' }], remainingText: array, format: 'mistral' });
    const openai = '{"tool_calls":[{"id":"c1","function":{"name":"get_time","arguments":"{}"}},{"id":"c2","function":{"name":"deploy"';
    expect(parseToolCalls(openai)).toMatchObject({ calls: [{ id: 'c1', name: 'get_time' }], remainingText: openai });
    const cutTag = '<tool_call>{"name":"deploy","arguments":{';
    const tags = `<tool_call>{"name":"get_time","arguments":{}}</tool_call>\n${cutTag}`;
    expect(parseToolCalls(tags)).toMatchObject({ calls: [{ name: 'get_time' }], remainingText: cutTag, format: 'hermes' });
    const array2 = '[TOOL_CALLS][{"name":"get_time","arguments":{}}, {"name":"deploy","arguments":{';
    expect(parseToolCalls(array2)).toMatchObject({ calls: [{ name: 'get_time' }], remainingText: ', {"name":"deploy","arguments":{' });
  });
});

describe('any call cut off where a value or key was due', () => {
  it('is no call, whatever its arguments and however it is spaced', () => {
    const args = fc.tuple(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }), fc.constantFrom(0, 1, '\t'));
    fc.assert(
      fc.property(args, fc.constantFrom('<tool_call>', '[TOOL_CALLS][', '<|python_tag|>', ''), ([value, space], marker) => {
        const text = `${marker}${JSON.stringify({ name: 'f', arguments: value }, null, space)}`;
        for (let end = marker.length + 1; end < text.length; end++) {
          const cut = text.slice(0, end);
          if (!',:{['.includes(cut.trimEnd().slice(-1))) continue;
          expect(parseToolCalls(cut)).toEqual({ calls: [], remainingText: cut.trim(), format: 'none' });
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('a missing closing bracket after a complete value is still repaired', () => {
  it.each([
    ['bare JSON', '{"name":"transfer","arguments":{"to":"bob","memo":"rent"}', '{"to":"bob","memo":"rent"}'],
    ['a Hermes tag never closed', '<tool_call>{"name":"transfer","arguments":{"to":"bob","dry_run":true}', '{"to":"bob","dry_run":true}'],
    ['before a closing tag', '<tool_call>{"name":"transfer","arguments":{"amount":50}</tool_call>', '{"amount":50}'],
    ['a Mistral array', '[TOOL_CALLS][{"name":"transfer","arguments":{"to":"bob"}}', '{"to":"bob"}'],
    ['after a string', '<function=transfer>{"to":"bob","memo":"rent"', '{"to":"bob","memo":"rent"}'],
  ])('%s', (_label, text, args) => {
    expect(callsOf(text)).toEqual([['transfer', args]]);
  });

  it('and a call that closed itself needs no arguments key', () => {
    expect(callsOf('<tool_call>{"name":"get_time"}')).toEqual([['get_time', '{}']]);
    expect(callsOf('<tool_call>{"name":"get_time"}</tool_call>')).toEqual([['get_time', '{}']]);
    expect(callsOf('[TOOL_CALLS][{"name":"get_time"}]')).toEqual([['get_time', '{}']]);
  });
});

describe('lenient numbers keep their digits', () => {
  it('beyond 2^53, so the exact-number guard sees what the model wrote', () => {
    expect(callsOf('<tool_call>{"name":"close_account","arguments":{"account_id":+9007199254740993}}</tool_call>')).toEqual([
      ['close_account', '{"account_id":9007199254740993}'],
    ]);
    expect(callsOf('<tool_call>{"name":"close_account","arguments":{"account_id":0012345678901234567891}}</tool_call>')).toEqual([
      ['close_account', '{"account_id":12345678901234567891}'],
    ]);
  });

  it('and a \\x escape is decoded, not read as the letter x', () => {
    expect(callsOf("<tool_call>{'name':'write','arguments':{'text':'\\x41\\x42'}}</tool_call>")).toEqual([['write', '{"text":"AB"}']]);
  });
});
