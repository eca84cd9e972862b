import fc, { type JsonValue } from 'fast-check';
import { parseToolCalls, type ParseFormat } from '../../src/parse';

type Args = { [key: string]: JsonValue };

interface Writer {
  readonly format: ParseFormat;
  readonly write: (name: string, args: Args, indent: number | undefined) => string;
}

const J = JSON.stringify;

/** A valid call written in every dialect the parser reads, and the format it should report. */
const WRITERS: Record<string, Writer> = {
  hermes: {
    format: 'hermes',
    write: (name, args, i) => `<tool_call>\n${J({ name, arguments: args }, null, i)}\n</tool_call>`,
  },
  hermesStringArgs: {
    format: 'hermes',
    write: (name, args) => `<tool_call>${J({ name, arguments: J(args) })}</tool_call>`,
  },
  llama: { format: 'llama', write: (name, args, i) => J({ name, parameters: args }, null, i) },
  llamaTyped: { format: 'llama', write: (name, args) => J({ type: 'function', name, parameters: args }) },
  pythonTag: { format: 'llama', write: (name, args) => `<|python_tag|>${J({ name, parameters: args })}<|eom_id|>` },
  functionTag: { format: 'llama', write: (name, args) => `<function=${name}>${J(args)}</function>` },
  mistralV3: { format: 'mistral', write: (name, args, i) => `[TOOL_CALLS]${J([{ name, arguments: args }], null, i)}` },
  mistralV11: { format: 'mistral', write: (name, args) => `[TOOL_CALLS]${name}[ARGS]${J(args)}` },
  openai: {
    format: 'openai',
    write: (name, args, i) =>
      J({ tool_calls: [{ id: 'call_fixed', type: 'function', function: { name, arguments: J(args) } }] }, null, i),
  },
  openaiFunction: { format: 'openai', write: (name, args) => J({ function: { name, arguments: J(args) } }) },
  markdownHermes: {
    format: 'markdown',
    write: (name, args, i) => '```json\n' + J({ name, arguments: args }, null, i) + '\n```',
  },
  markdownOpenai: {
    format: 'markdown',
    write: (name, args) => '```\n' + J({ type: 'function', function: { name, arguments: J(args) } }) + '\n```',
  },
};

const toolName = fc.stringMatching(/^[a-zA-Z_][a-zA-Z0-9_]{0,30}$/);
const isArgs = (value: JsonValue): value is Args =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const argsObject: fc.Arbitrary<Args> = fc.oneof(
  fc.dictionary(fc.string({ unit: 'binary' }), fc.jsonValue({ maxDepth: 4 }), { maxKeys: 6 }),
  fc.jsonValue({ maxDepth: 5 }).filter(isArgs),
);
/** Prose around a call: letters, digits and punctuation that open nothing. */
const prose = fc.stringMatching(/^[A-Za-z0-9 .,!?\n]{0,40}$/);
const indent = fc.constantFrom(undefined, 2);

/** What the arguments look like after a trip through JSON text (`-0` becomes `0`, and so on). */
const normalise = (args: Args): unknown => JSON.parse(J(args));

describe.each(Object.entries(WRITERS))('a valid call written as %s', (_label, writer) => {
  it('parses back to itself', () => {
    fc.assert(
      fc.property(toolName, argsObject, prose, prose, indent, (name, args, before, after, spaces) => {
        const text = `${before}${writer.write(name, args, spaces)}${after}`;
        const result = parseToolCalls(text);
        // One expect a run, not five: jest's expect() took more of this file's CPU than the parses.
        expect({
          format: result.format,
          calls: result.calls.length,
          name: result.calls[0]?.name,
          arguments: JSON.parse(result.calls[0]?.arguments ?? 'null'),
          remainingText: result.remainingText,
        }).toEqual({ format: writer.format, calls: 1, name, arguments: normalise(args), remainingText: `${before}${after}`.trim() });
      }),
      { numRuns: 300 },
    );
  });

  it('is still found when it is the only offered tool', () => {
    fc.assert(
      fc.property(toolName, argsObject, (name, args) => {
        const result = parseToolCalls(writer.write(name, args, undefined), [name]);
        expect(result.calls.map((call) => call.name)).toEqual([name]);
      }),
      { numRuns: 100 },
    );
  });
});

describe('several calls in one message', () => {
  it('come back in order for each dialect that allows several', () => {
    const calls = fc.array(fc.tuple(toolName, argsObject), { minLength: 1, maxLength: 5 });
    fc.assert(
      fc.property(calls, (list) => {
        const hermes = list.map(([name, args]) => WRITERS.hermes?.write(name, args, undefined)).join('\n');
        const mistral = `[TOOL_CALLS]${J(list.map(([name, args]) => ({ name, arguments: args })))}`;
        for (const text of [hermes, mistral]) {
          const result = parseToolCalls(text);
          const expected = list.map(([, args]) => normalise(args));
          expect([result.calls.map((call) => call.name), result.calls.map((call) => JSON.parse(call.arguments))]).toEqual([list.map(([name]) => name), expected]);
        }
      }),
      { numRuns: 200 },
    );
  });
});
