import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { parseCommand } from '../../src/cli/parse-command';

type Options = Parameters<typeof parseCommand>[2];

async function run(file: string, options: Options = {}): Promise<{ code: number; lines: string[] }> {
  const lines: string[] = [];
  const code = await parseCommand(file, (line) => lines.push(line), options);
  return { code, lines };
}

const dir = mkdtempSync(join(tmpdir(), 'parse-command-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('parseCommand', () => {
  it('prints the format, each call with its id, and the remaining text', async () => {
    const file = join(dir, 'hermes.txt');
    writeFileSync(
      file,
      'Checking both.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>\n' +
        '<tool_call>{"name": "get_time", "arguments": {}}</tool_call>',
    );
    const { code, lines } = await run(file);
    expect(code).toBe(0);
    expect(lines[0]).toBe('format: hermes');
    expect(lines[1]).toBe('calls: 2');
    expect(lines[2]).toMatch(/^ {2}get_weather\(\{"city":"Oslo"\}\) {2}id call_[A-Za-z0-9]{24}$/);
    expect(lines[3]).toMatch(/^ {2}get_time\(\{\}\) {2}id call_[A-Za-z0-9]{24}$/);
    expect(lines.slice(4)).toEqual(['remaining text:', 'Checking both.']);
  });

  it('reads standard input for -', async () => {
    const stdin = Readable.from([Buffer.from('[TOOL_CALLS]lookup[CALL_ID]abc123XYZ[ARGS]{"q": "x"}')]);
    const { code, lines } = await run('-', { stdin });
    expect(code).toBe(0);
    expect(lines).toEqual([
      'format: mistral',
      'calls: 1',
      '  lookup({"q":"x"})  id abc123XYZ',
      'remaining text:',
      '  (none)',
    ]);
  });

  it('says when nothing was found, and applies offered tools', async () => {
    const file = join(dir, 'llama.txt');
    const text = '{"name": "rm", "parameters": {"path": "/"}}';
    writeFileSync(file, text);
    const { code, lines } = await run(file, { offeredTools: ['get_weather'] });
    expect(code).toBe(0);
    // The call not offered is named in a warning (test/parse/parse-warnings.test.ts).
    expect(lines).toEqual(['format: none', 'calls: 0', 'warning: a call of "rm" was not offered: left in remaining_text', 'remaining text:', text]);
  });

  it('exits 1 with a clear message on standard error when the file cannot be read', async () => {
    const missing = join(dir, 'missing.txt');
    const errors: string[] = [];
    expect(await run(missing, { err: (line) => errors.push(line) })).toEqual({ code: 1, lines: [] });
    expect(await run(dir, { err: (line) => errors.push(line) })).toEqual({ code: 1, lines: [] });
    expect(errors).toEqual([`dispatchctl parse: cannot read ${missing}: no such file`, `dispatchctl parse: cannot read ${dir}: it is a directory`]);
  });

  it('shows what the model wrote with its control, bidi and invisible characters escaped', async () => {
    const file = join(dir, 'escapes.txt');
    writeFileSync(file, 'said\x1b]52;c;cHduZWQ=\x07\r\u202e\n\tthen\n<tool_call>{"name": "get_time", "arguments": {"tz": "\u009b31m"}, "id": "c1\\r\\n\\u001b[8m"}</tool_call>');
    const { code, lines } = await run(file);
    expect(code).toBe(0);
    // The model's id holds CR, LF and ESC, which Dispatch refuses: the call gets a fresh one.
    expect(lines.slice(0, 3)).toEqual(['format: hermes', 'calls: 1', expect.stringMatching(/^ {2}get_time\(\{"tz":"\\u009b31m"\}\) {2}id call_[A-Za-z0-9]{24}$/)]);
    expect(lines.slice(3)).toEqual(['remaining text:', String.raw`said\u001b]52;c;cHduZWQ=\u0007\u000d\u202e` + '\n\tthen']);
  });
});
