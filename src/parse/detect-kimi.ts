import { endOfName } from './detect-function-tag';
import type { FoundCalls } from './found-calls';
import { skipSpace } from './marker-finder';
import { detectSectioned, type CallHeader, type SectionedDialect } from './sectioned-calls';
import type { WorkBudget } from './tolerant-json';

const ARGUMENTS_BEGIN = '<|tool_call_argument_begin|>';
const MAX_ID = 512;
/** `functions.NAME:INDEX`: the name, and whether the index is there. */
const CALL_ID = /^(?:functions\.)?(.+?)(:\d+)?$/;

const KIMI: SectionedDialect = {
  format: 'kimi',
  // Some checkpoints write the section tokens in the singular, as vLLM's parser allows.
  sectionBegin: ['<|tool_calls_section_begin|>', '<|tool_call_section_begin|>'],
  sectionEnd: ['<|tool_calls_section_end|>', '<|tool_call_section_end|>'],
  callBegin: ['<|tool_call_begin|>'],
  callEnd: ['<|tool_call_end|>'],
  readHeader,
};

/**
 * Kimi K2 calls: `<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city":"Paris"}<|tool_call_end|><|tool_calls_section_end|>`.
 * The call is named by the id less its `functions.` prefix and `:INDEX`, and keeps the id
 * (`functions.get_weather:0`) as its id, as vLLM's `kimi_k2` parser does. Unlike vLLM, a dotted
 * name stays whole (`functions.web.search:1` calls `web.search`, not `search`), an id with no
 * index still names the call (which then gets an id of its own), a call needs no section token
 * around it, and the arguments must be a JSON object.
 */
export function detectKimi(text: string, budget: WorkBudget): Generator<FoundCalls> {
  return detectSectioned(text, budget, KIMI);
}

function readHeader(text: string, from: number, limit: number): CallHeader | undefined {
  const idStart = skipSpace(text, from, limit);
  const idEnd = endOfName(text, idStart, idStart + MAX_ID < limit ? idStart + MAX_ID : limit);
  const argumentsAt = skipSpace(text, idEnd, limit);
  if (idEnd === idStart || !text.startsWith(ARGUMENTS_BEGIN, argumentsAt)) return undefined;
  const id = text.slice(idStart, idEnd);
  const [, name = '', index] = CALL_ID.exec(id) ?? [];
  return { name, id: index === undefined ? undefined : id, argumentsFrom: argumentsAt + ARGUMENTS_BEGIN.length };
}
