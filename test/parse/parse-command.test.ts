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
    expect(lines).toEqual(['format: none', 'calls: 0', 'remaining text:', text]);
  });

  it('exits 1 with a clear message when the file cannot be read', async () => {
    const missing = join(dir, 'missing.txt');
    expect(await run(missing)).toEqual({ code: 1, lines: [`dispatchctl parse: cannot read ${missing}: no such file`] });
    expect(await run(dir)).toEqual({ code: 1, lines: [`dispatchctl parse: cannot read ${dir}: it is a directory`] });
  });
});
