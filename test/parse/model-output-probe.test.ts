import { parseToolCalls } from '../../src/parse';

// A local-model integrator's probe (about 150 raw outputs of open models):
// - a tagged call with its arguments under another key (`args`, `input`, ...) or flat beside its
//   name ran with `{}`, silently: a send_email without recipient or body;
// - JSON in a python or javascript fence, in inline code, and a tool list repeated in OpenAI's
//   `{"type": "function", "function": {...}}` shape were taken for calls and run (a python example
//   sent "I quit" to the boss), and cut out of the text the user reads;
// - a list of calls cut off by max_tokens returned its complete calls and dropped the cut one with
//   no warning.

const parse = (text: string) => parseToolCalls(text, []);
const names = (text: string) => parse(text).calls.map((call) => [call.name, call.arguments]);

describe('under a marker, arguments under another key or flat', () => {
  it.each(['args', 'params', 'argument', 'parameter', 'input', 'tool_input', 'kwargs', 'Arguments'])('reads them from "%s", and says so', (key) => {
    const result = parse(`<tool_call>\n{"name": "send_email", "${key}": {"to": "ada@example.com", "body": "hi"}}\n</tool_call>`);
    expect(result.calls.map((c) => [c.name, c.arguments])).toEqual([['send_email', '{"to":"ada@example.com","body":"hi"}']]);
    expect(result.warnings).toEqual([`a call of "send_email" was returned with its arguments read from "${key}", not "arguments"`]);
  });

  it('reads a flat call from its other keys (not its id or type), and says so', () => {
    const result = parse('<tool_call>\n{"name": "send_email", "id": "call_1", "type": "function", "to": "ada@example.com", "body": "hi"}\n</tool_call>');
    expect(result.calls.map((c) => [c.id, c.name, c.arguments])).toEqual([['call_1', 'send_email', '{"to":"ada@example.com","body":"hi"}']]);
    expect(result.warnings).toEqual([`a call of "send_email" was returned with its arguments read from the object's other keys, not "arguments"`]);
  });

  it('under [TOOL_CALLS] too; a call of a name alone has no arguments, unsaid; without a marker none of this is a call', () => {
    expect(names('[TOOL_CALLS] [{"name": "get_weather", "input": {"city": "Paris"}}]')).toEqual([['get_weather', '{"city":"Paris"}']]);
    expect(parse('<tool_call>\n{"name": "get_time"}\n</tool_call>')).toMatchObject({ calls: [{ name: 'get_time', arguments: '{}' }] });
    expect(parse('<tool_call>\n{"name": "get_time"}\n</tool_call>').warnings).toBeUndefined();
    expect(names('{"name": "send_email", "args": {"to": "x"}}')).toEqual([]);
  });
});

describe('JSON in code is no call', () => {
  const CALL = '{"name": "send_email", "arguments": {"to": "boss@corp.com", "subject": "I quit"}}';
  it.each([
    ['a python fence', `Like this:\n\`\`\`python\nclient.call(${CALL})\n\`\`\`\nDone.`],
    ['a python fence with an assignment', `\`\`\`py\npayload = ${CALL}\n\`\`\``],
    ['a javascript fence', `\`\`\`javascript\nconst call = ${CALL};\n\`\`\``],
    ['inline code', `To call a tool, output \`${CALL}\` and wait.`],
    ['a tool list in OpenAI shape', '[{"type": "function", "function": {"name": "send_email", "description": "Sends an email", "parameters": {"type": "object", "properties": {"to": {"type": "string"}}}}}]'],
  ])('%s', (_what, text) => {
    const result = parse(text);
    expect(result.calls).toEqual([]);
    expect(result.remainingText).toBe(text);
  });

  it('a json fence, a fence without a language, bare JSON and an OpenAI call are calls, as before; backticks inside a call are its own', () => {
    expect(names(`\`\`\`json\n${CALL}\n\`\`\``)).toHaveLength(1);
    expect(names(`\`\`\`\n${CALL}\n\`\`\``)).toHaveLength(1);
    expect(names(CALL)).toHaveLength(1);
    expect(names('{"type": "function", "function": {"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}}')).toEqual([['get_weather', '{"city":"Paris"}']]);
    expect(names('Run {"name": "shell", "arguments": {"cmd": "echo `date` and `whoami`"}} now')).toEqual([['shell', '{"cmd":"echo `date` and `whoami`"}']]);
  });
});

describe('a list of calls cut off by the end of the text', () => {
  it('returns the complete calls, names the cut one in a warning, and leaves its text', () => {
    const mistral = parse('[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_time", "arguments": {"timezone": "C');
    expect(mistral.calls.map((c) => c.name)).toEqual(['get_weather']);
    expect(mistral.warnings).toEqual(['a call of "get_time" was cut off before its arguments ended: left in remaining_text']);
    expect(mistral.remainingText).toBe(', {"name": "get_time", "arguments": {"timezone": "C');
    const bare = parse('[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "send_email", "arguments": {"to": "x');
    expect(bare.calls.map((c) => c.name)).toEqual(['get_weather']);
    expect(bare.warnings).toEqual(['a call of "send_email" was cut off before its arguments ended: left in remaining_text']);
  });

  it('a complete list says nothing', () => {
    expect(parse('[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}]').warnings).toBeUndefined();
  });
});

describe("Llama 3.2's pythonic list with the server's end-of-turn token kept", () => {
  it.each(['<|eot_id|>', '<|eom_id|>', ' <|eot_id|>\n', '<|eot|>'])('is a call, the token left out of remaining_text (%j)', (token) => {
    const result = parse(`[get_weather(city="Paris")]${token}`);
    expect(result.calls.map((c) => [c.name, c.arguments])).toEqual([['get_weather', '{"city":"Paris"}']]);
    expect(result.remainingText).toBe('');
  });

  it('prose after the token still makes the list an example, as before', () => {
    expect(parse('[get_weather(city="Paris")]<|eot_id|> and more').calls).toEqual([]);
  });
});
