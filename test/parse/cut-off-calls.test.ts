import fc from 'fast-check';
import { parseToolCalls } from '../../src/parse';
import { callsOf, expectNoCalls } from './parse-helpers';

// A model output cut off mid-call came back as a complete call, which Dispatch then ran: cut after
// the name or the arguments' `{`, with arguments {} (and the schema's defaults filled in); cut
// after a comma, with a partial recipient list and the later fields dropped (found by the parse
// hunt); and cut after a complete value in the arguments, `{"env":"staging"` that may have gone on
// `,"dry_run":true` (found by the next session). Where the text ends, only the braces around
// arguments that closed themselves are supplied; before a closing tag, which shows the model ended
// the call there, a missing brace is supplied and a stray comma passed over.

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
    // Before a closing tag nothing is supplied where a value or key was due, and a call object
    // the tag closes must have its arguments.
    ['before a closing tag, after the name', '<tool_call>{"name":"deploy"</tool_call>'],
    ["before a closing tag, after the arguments' brace", '<tool_call>{"name":"deploy","arguments":{</tool_call>'],
    // Where the text ends, after a complete value inside the arguments: more members may have followed.
    ['a Hermes tag, after a string', '<tool_call>{"name":"deploy","arguments":{"env":"staging"'],
    ['a Hermes tag, after a literal', '<tool_call>{"name":"deploy","arguments":{"env":"staging","dry_run":true'],
    ['a Hermes tag, after a nested object', '<tool_call>{"name":"deploy","arguments":{"env":"staging","opts":{"fast":true}'],
    ['a Hermes tag, after a list', '<tool_call>{"name":"send_email","arguments":{"to":["ceo@x.com"]'],
    ['a Hermes tag, after a string and spaces', '<tool_call>{"name":"deploy","arguments":{"env":"staging"  \n'],
    ['a Llama <function=...> tag', '<function=deploy>{"env":"staging"'],
    ['a Mistral array', '[TOOL_CALLS][{"name":"deploy","arguments":{"env":"staging"'],
    ['Mistral name[ARGS]', '[TOOL_CALLS]deploy[ARGS]{"env":"staging"'],
    ['<|python_tag|>', '<|python_tag|>{"name":"deploy","parameters":{"env":"staging"'],
    ['bare JSON', 'Deploying: {"name":"deploy","arguments":{"env":"staging"'],
    ['a fence never closed', '```json\n{"name":"deploy","arguments":{"env":"staging"'],
    ['an OpenAI call', '{"tool_calls":[{"id":"c1","function":{"name":"deploy","arguments":{"env":"staging"'],
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

/**
 * Whether `result` is what toEqual({ calls: [], remainingText, format: 'none' }) accepts: those
 * three, and any other key undefined (toEqual passes over undefined properties).
 */
function isNone(result: ReturnType<typeof parseToolCalls>, remainingText: string): boolean {
  const fields: Record<string, unknown> = { ...result };
  return (
    Array.isArray(result.calls) &&
    result.calls.length === 0 &&
    result.remainingText === remainingText &&
    result.format === 'none' &&
    // `warnings` may say a call was cut off (test/parse/parse-warnings.test.ts).
    Object.keys(fields).every((key) => ['calls', 'remainingText', 'format', 'warnings'].includes(key) || fields[key] === undefined)
  );
}

describe('a call whose arguments the end of the text left open is not a call', () => {
  it('wherever the text ends before the arguments close (where a value or key was due, or after one), whatever they hold and however spaced', () => {
    const args = fc.tuple(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }), fc.constantFrom(0, 1, '\t'));
    fc.assert(
      fc.property(args, fc.constantFrom('<tool_call>', '[TOOL_CALLS][', '<|python_tag|>', ''), ([value, space], marker) => {
        const text = `${marker}${JSON.stringify({ name: 'f', arguments: value }, null, space)}`;
        // The arguments' own closing brace is the one before the call's.
        const argumentsClose = text.lastIndexOf('}', text.lastIndexOf('}') - 1);
        for (let end = marker.length + 1; end <= argumentsClose; end++) {
          const cut = text.slice(0, end);
          const result = parseToolCalls(cut);
          // toEqual only when the plain check fails, for its message: it took 60% of this test's time.
          if (!isNone(result, cut.trim())) expect(result).toEqual({ calls: [], remainingText: cut.trim(), format: 'none', warnings: result.warnings });
        }
        expect(callsOf(text.slice(0, argumentsClose + 1))).toEqual([['f', JSON.stringify(value)]]);
      }),
      // Each run cuts its text at every position (~240 on average), so every kind of cut is in
      // nearly every run; 150 runs draw each marker and spacing a dozen times (300 took 6 s).
      { numRuns: 150 },
    );
  });

  it('nor is the last of several, whose span keeps its text', () => {
    const text = '[TOOL_CALLS][{"name":"get_time","arguments":{}}, {"name":"deploy","arguments":{"env":"staging"';
    expect(parseToolCalls(text)).toMatchObject({ calls: [{ name: 'get_time', arguments: '{}' }], remainingText: text, format: 'mistral' });
  });
});

// Only arguments objects were checked: arguments that are an array, left open by the end of the
// text, ran with the values read so far (found by a review).
describe('arguments that are an array, left open by the end of the text, are not a call', () => {
  it.each([
    ['Hermes', '<tool_call>{"name":"deploy","arguments":["staging","prod"'],
    ['Hermes, spaced', '<tool_call>{"name": "deploy", "arguments": ["staging", "prod" \n'],
    ['Hermes, nested', '<tool_call>{"name":"deploy","arguments":[["staging"],["prod"]'],
    ['Mistral', '[TOOL_CALLS][{"name":"deploy","arguments":["staging","prod"'],
    ['Mistral named', '[TOOL_CALLS]deploy[ARGS]["staging","prod"'],
    ['Llama', '<function=deploy>["staging","prod"'],
    ['python_tag', '<|python_tag|>{"name":"deploy","parameters":["staging","prod"'],
    ['bare', '{"name":"deploy","arguments":["staging","prod"'],
  ])('%s', (_label, text) => {
    expectNoCalls(text);
  });

  it('but arrays that closed themselves, or that a closing tag ended, are complete', () => {
    expect(callsOf('<tool_call>{"name":"deploy","arguments":["staging","prod"]')).toEqual([['deploy', '["staging","prod"]']]);
    expect(callsOf('<tool_call>{"name":"deploy","arguments":["staging","prod"</tool_call>')).toEqual([['deploy', '["staging","prod"]']]);
  });
});

describe('a missing closing bracket after a complete value is still repaired', () => {
  it.each([
    ['bare JSON, around arguments that closed', '{"name":"transfer","arguments":{"to":"bob","memo":"rent"}', '{"to":"bob","memo":"rent"}'],
    ['a Hermes tag never closed, around arguments that closed', '<tool_call>{"name":"transfer","arguments":{"to":"bob","dry_run":true}', '{"to":"bob","dry_run":true}'],
    ['before a closing tag', '<tool_call>{"name":"transfer","arguments":{"amount":50}</tool_call>', '{"amount":50}'],
    ['before a closing tag, in the arguments', '<tool_call>{"name":"transfer","arguments":{"to":"bob"</tool_call>', '{"to":"bob"}'],
    ['a Mistral array, around arguments that closed', '[TOOL_CALLS][{"name":"transfer","arguments":{"to":"bob"}}', '{"to":"bob"}'],
    ['after a string, before a closing tag', '<function=transfer>{"to":"bob","memo":"rent"</function>', '{"to":"bob","memo":"rent"}'],
    ['before the next call', '<function=transfer>{"to":"bob"<function=get_time>{}</function>', '{"to":"bob"}'],
  ])('%s', (_label, text, args) => {
    expect(callsOf(text)[0]).toEqual(['transfer', args]);
  });

  it('and a call that closed itself needs no arguments key', () => {
    expect(callsOf('<tool_call>{"name":"get_time"}')).toEqual([['get_time', '{}']]);
    expect(callsOf('<tool_call>{"name":"get_time"}</tool_call>')).toEqual([['get_time', '{}']]);
    expect(callsOf('[TOOL_CALLS][{"name":"get_time"}]')).toEqual([['get_time', '{}']]);
  });
});

describe('a stray comma before a closing tag is passed over: the tag shows the call ended', () => {
  it.each([
    ['after the arguments', '<tool_call>{"name":"get_weather","arguments":{"city":"Paris"},</tool_call>', '{"city":"Paris"}'],
    ['in the arguments', '<tool_call>{"name":"get_weather","arguments":{"city":"Paris",</tool_call>', '{"city":"Paris"}'],
    ['after a list', '<tool_call>{"name":"get_weather","arguments":{"cities":["Paris"],</tool_call>', '{"cities":["Paris"]}'],
    ['with spaces', '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"},\n</tool_call>', '{"city":"Paris"}'],
    ['a Llama <function=...> tag', '<function=get_weather>{"city":"Paris",</function>', '{"city":"Paris"}'],
    ['before a closing brace, as before', '<tool_call>{"name":"get_weather","arguments":{"city":"Paris",},}</tool_call>', '{"city":"Paris"}'],
  ])('%s', (_label, text, args) => {
    expect(parseToolCalls(text)).toMatchObject({ calls: [{ name: 'get_weather', arguments: args }], remainingText: '' });
  });

  it('but not where a value or key was due, nor after a comma in a list, nor in a call with no arguments', () => {
    expectNoCalls('<tool_call>{"name":"get_weather","arguments":{"city":</tool_call>');
    expectNoCalls('<tool_call>{"name":"get_weather","arguments":{</tool_call>');
    expectNoCalls('<tool_call>{"name":"get_weather","arguments":{"cities":[</tool_call>');
    // In a list the comma is where a value was due: the model may have meant more recipients (found by a review).
    expectNoCalls('<tool_call>{"name":"send_email","arguments":{"to":["a@x.com","b@x.com",</tool_call>');
    expectNoCalls('<function=send_email>{"to":["a@x.com", </function>');
    expect(callsOf('[TOOL_CALLS][{"name":"send_email","arguments":{"to":["a@x.com",[TOOL_CALLS][{"name":"x","arguments":{}}]')).toEqual([['x', '{}']]);
    expectNoCalls('<tool_call>{"name":"get_weather",</tool_call>');
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

// Arguments that are `null` (or another literal) where the text ends ran the tool with {}: the
// null was taken as complete, though the text may have gone on (`nul` was refused, `null` not;
// found by the last session). A literal or number the text ends in has no closing mark, so the
// call is not runnable; one that something ended (a space, a brace, a closing tag) is complete.
describe('arguments that are a literal the end of the text may have cut are not a call', () => {
  it.each([
    ['Hermes', '<tool_call>{"name":"deploy","arguments":null'],
    ['Hermes, parameters', '<tool_call>{"name":"deploy","parameters":null'],
    ['Hermes, Python None', "<tool_call>{'name':'deploy','arguments':None"],
    ['Hermes, spaced', '<tool_call>{"name": "deploy", "arguments": null'],
    ['Hermes, true', '<tool_call>{"name":"deploy","arguments":true'],
    ['Hermes, a duplicate arguments key', '<tool_call>{"name":"deploy","arguments":{"env":"staging"},"arguments":null'],
    ['Mistral array', '[TOOL_CALLS][{"name":"deploy","arguments":null'],
    ['Mistral name[ARGS]', '[TOOL_CALLS]deploy[ARGS]null'],
    ['Mistral name[ARGS], a number', '[TOOL_CALLS]deploy[ARGS]12'],
    ['<|python_tag|>', '<|python_tag|>{"name":"deploy","parameters":null'],
    ['bare JSON', 'Deploying: {"name":"deploy","arguments":null'],
    ['a fence never closed', '```json\n{"name":"deploy","arguments":null'],
    ['an OpenAI call', '{"tool_calls":[{"id":"c1","function":{"name":"deploy","arguments":null'],
  ])('%s', (_label, text) => {
    expectNoCalls(text);
    expectNoCalls(text, ['deploy']);
  });

  it('nor is the last of several, whose span keeps its text', () => {
    const text = '[TOOL_CALLS][{"name":"get_time","arguments":{}}, {"name":"deploy","arguments":null';
    expect(parseToolCalls(text)).toMatchObject({ calls: [{ name: 'get_time', arguments: '{}' }], remainingText: text, format: 'mistral' });
  });

  it('but a literal something ended is complete: a brace, a closing tag, the next marker, a space, a later member', () => {
    expect(callsOf('<tool_call>{"name":"deploy","arguments":null}')).toEqual([['deploy', '{}']]);
    expect(callsOf('<tool_call>{"name":"deploy","arguments":null</tool_call>')).toEqual([['deploy', '{}']]);
    expect(callsOf('[TOOL_CALLS][{"name":"deploy","arguments":null}')).toEqual([['deploy', '{}']]);
    expect(callsOf('[TOOL_CALLS]deploy[ARGS]null[TOOL_CALLS]get_time[ARGS]{}')).toEqual([['deploy', '{}'], ['get_time', '{}']]);
    expect(callsOf('<tool_call>{"name":"deploy","arguments":null ')).toEqual([['deploy', '{}']]);
    expect(callsOf('<tool_call>{"arguments":null,"name":"deploy"')).toEqual([['deploy', '{}']]);
    // A literal the text ends in beside complete arguments is not theirs.
    expect(callsOf('<tool_call>{"name":"deploy","arguments":{"env":"staging"},"strict":true')).toEqual([['deploy', '{"env":"staging"}']]);
    // A string closed itself, OpenAI's arguments text too.
    expect(callsOf('{"tool_calls":[{"id":"c1","function":{"name":"deploy","arguments":"{\\"env\\":\\"staging\\"}"')).toEqual([['deploy', '{"env":"staging"}']]);
  });

  // Every one of the 48 combinations once (60 random draws of them before, which left some out).
  it('wherever the text ends in a call whose arguments are a literal, before the call closes', () => {
    for (const literal of ['null', 'None', 'true', 'false', 'True', '12']) {
      for (const key of ['arguments', 'parameters']) {
        for (const marker of ['<tool_call>', '[TOOL_CALLS][', '<|python_tag|>', '']) {
          const text = `${marker}{"name":"f","${key}":${literal}}`;
          for (let end = marker.length + 1; end < text.length; end++) {
            const cut = text.slice(0, end);
            expect(parseToolCalls(cut).calls).toEqual([]);
          }
        }
      }
    }
  });
});
