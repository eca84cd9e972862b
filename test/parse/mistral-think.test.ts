import { parseToolCalls } from '../../src/parse';
import { callsOf, expectNoCalls } from './parse-helpers';

/**
 * Magistral and Ministral reasoning models write their reasoning between the special tokens
 * `[THINK]` and `[/THINK]` (mistral-common), beside `[TOOL_CALLS]`: a call drafted there is no
 * more a call than one drafted in `<think>`.
 */
describe('Mistral [THINK] reasoning', () => {
  it('hides a bare call drafted in it when the answer makes none', () => {
    expectNoCalls(
      '[THINK]The user wants /tmp cleaned. I could call {"name": "delete_file", "arguments": {"path": "/tmp"}} ' +
        'but that is destructive, so I will ask first.[/THINK]Do you want me to delete everything in /tmp?',
    );
  });

  it('hides a [TOOL_CALLS] call drafted in it and keeps the one after it', () => {
    const text =
      '[THINK]Plan: [TOOL_CALLS]delete_file[ARGS]{"path": "/"} is too risky; list first.[/THINK]' +
      '[TOOL_CALLS]list_dir[ARGS]{"path": "/"}';
    const result = parseToolCalls(text);
    expect(result.calls.map((call) => [call.name, call.arguments])).toEqual([['list_dir', '{"path":"/"}']]);
    expect(result.remainingText).toBe('[THINK]Plan: [TOOL_CALLS]delete_file[ARGS]{"path": "/"} is too risky; list first.[/THINK]');
  });

  it('runs to the end of the text when it is never closed', () => {
    expectNoCalls('[THINK]Maybe [TOOL_CALLS]delete_file[ARGS]{"path": "/"} then');
  });

  it('is the exact token: [think] in prose opens nothing, nor does one quoted in a call', () => {
    expect(callsOf('Step [think]: {"name": "get_time", "arguments": {}}')).toEqual([['get_time', '{}']]);
    expect(callsOf('[TOOL_CALLS]write_file[ARGS]{"content": "Magistral opens with [THINK] and closes with [/THINK]"}')).toEqual([
      ['write_file', '{"content":"Magistral opens with [THINK] and closes with [/THINK]"}'],
    ]);
  });
});
