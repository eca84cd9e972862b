import { readFile } from 'node:fs/promises';
import { terminalText, terminalWord } from '../events/terminal-text';
import { DEFAULT_MAX_INPUT_CHARS, parseToolCalls } from '../parse/parse-tool-calls';
import { readProblem } from './usage';

/** Inputs of `parseCommand` beyond the file name. */
export interface ParseCommandOptions {
  /** Tool names the model was offered; a call naming any other is not a call. */
  readonly offeredTools?: readonly string[];
  /** What `-` reads. @default process.stdin */
  readonly stdin?: AsyncIterable<Buffer | string>;
  /** Where a failure is reported. @default standard error */
  readonly err?: (line: string) => void;
}

/**
 * `dispatchctl parse FILE`: finds the tool calls in raw model output (`-` reads standard input)
 * locally, with no server, and prints the format, each call as `name(arguments)` with its id,
 * and the text left around the calls, all escaped as model text must be (terminalWord,
 * terminalText: a name, an id or arguments on one line; the remaining text keeps its line breaks
 * and tabs). Resolves with the exit code: 0, or 1 when the input cannot be read (said on `err`).
 */
export async function parseCommand(
  file: string,
  out: (line: string) => void,
  options: ParseCommandOptions = {},
): Promise<number> {
  let text: string;
  try {
    text = file === '-' ? await readAll(options.stdin ?? process.stdin) : await readFile(file, 'utf8');
  } catch (error) {
    const err = options.err ?? ((line: string) => process.stderr.write(`${line}\n`));
    err(`dispatchctl parse: cannot read ${file === '-' ? 'standard input' : file}: ${readProblem(error)}`);
    return 1;
  }
  const result = parseToolCalls(text, options.offeredTools);
  out(`format: ${result.format}`);
  if (text.length > DEFAULT_MAX_INPUT_CHARS) {
    out(`note: the input has ${text.length} characters, over the ${DEFAULT_MAX_INPUT_CHARS} searched`);
  }
  out(`calls: ${result.calls.length}`);
  for (const call of result.calls) out(`  ${terminalWord(call.name)}(${terminalText(call.arguments)})  id ${terminalWord(call.id)}`);
  for (const warning of result.warnings ?? []) out(`warning: ${terminalText(warning)}`);
  out('remaining text:');
  out(result.remainingText === '' ? '  (none)' : terminalText(result.remainingText, true));
  return 0;
}

async function readAll(stream: AsyncIterable<Buffer | string>): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}
