import { parseToolCalls } from '../../src/parse';
import { callsOf, expectNoCalls } from './parse-helpers';

/** A call whose arguments hold an object shaped like a call, broken by a missing value. */
const BROKEN_WITH_NESTED_CALL = '{"name":"send_email","arguments":{"to":{"name":"rm","arguments":{"path":"/"}},"body": }}';

describe('an object inside a broken call is not a call', () => {
  it.each([
    ['Mistral, a nested object with a name', '[TOOL_CALLS][{"name":"create_user","arguments":{"user":{"name":"bob","role":"admin"},"note": }}]'],
    ['Mistral, a nested call', `[TOOL_CALLS][${BROKEN_WITH_NESTED_CALL}]`],
    ['Mistral, cut off', '[TOOL_CALLS][{"name":"create_user","arguments":{"user":{"name":"bob"},"welcome_text":"Hello, and welc'],
    ['Hermes, cut off', '<tool_call>{"name":"create_user","arguments":{"user":{"name":"bob"},"welcome_text":"Hello, and welc'],
    ['Hermes, a nested call', `<tool_call>${BROKEN_WITH_NESTED_CALL}</tool_call>`],
    ['bare JSON, a nested call', BROKEN_WITH_NESTED_CALL],
    ['bare JSON, a nested call, cut off', '{"name":"send_email","arguments":{"to":{"name":"rm","arguments":{"path":"/"}},"body":"Hi'],
    ['a fence, a nested call', '```json\n' + BROKEN_WITH_NESTED_CALL + '\n```'],
    ['<|python_tag|>, a nested call', `<|python_tag|>${BROKEN_WITH_NESTED_CALL}`],
  ])('%s', (_label, text) => {
    expectNoCalls(text);
  });

  it('even when the nested name is an offered tool', () => {
    const text = '[TOOL_CALLS][{"name":"update_record","arguments":{"record":{"name":"delete_all"},"x": }}]';
    expectNoCalls(text, ['update_record', 'delete_all']);
  });
});

describe('complete calls beside a broken one', () => {
  it('keeps the complete elements of a Mistral array before the broken one', () => {
    const text = '[TOOL_CALLS][{"name":"a","arguments":{"x":1}}, {"name":"b","arguments":{"to":{"name":"rm"},"q":"unterm';
    const result = parseToolCalls(text);
    expect(result.calls.map((call) => [call.name, call.arguments])).toEqual([['a', '{"x":1}']]);
    expect(result.format).toBe('mistral');
    expect(result.remainingText).toBe(', {"name":"b","arguments":{"to":{"name":"rm"},"q":"unterm');
  });

  it('finds a call after a broken one', () => {
    expect(callsOf(`${BROKEN_WITH_NESTED_CALL}\nSorry, retrying: {"name":"send_email","arguments":{"to":"bob"}}`)).toEqual([
      ['send_email', '{"to":"bob"}'],
    ]);
  });

  it('finds the calls in a broken OpenAI tool_calls wrapper', () => {
    const text = '{"tool_calls":[{"id":"c1","function":{"name":"a","arguments":"{}"}}, {"id": ]}';
    expect(callsOf(text)).toEqual([['a', '{}']]);
  });
});
