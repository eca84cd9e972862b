import { endOfName } from './detect-function-tag';
import type { FoundCalls } from './found-calls';
import { skipSpace } from './marker-finder';
import { detectSectioned, type CallHeader, type SectionedDialect } from './sectioned-calls';
import { tokenAt, type Spellings } from './special-tokens';
import type { WorkBudget } from './tolerant-json';
import { skipFillers } from './value-sequence';

const MAX_NAME = 256;

/** DeepSeek's token `<｜word｜>` (fullwidth bars, U+FF5C; `▁` is U+2581), and with ASCII bars. */
const token = (word: string): Spellings => [`<\uff5c${word}\uff5c>`, `<|${word}|>`];

const SEPARATOR = token('tool▁sep');

const DEEPSEEK: SectionedDialect = {
  format: 'deepseek',
  sectionBegin: token('tool▁calls▁begin'),
  sectionEnd: token('tool▁calls▁end'),
  callBegin: token('tool▁call▁begin'),
  callEnd: token('tool▁call▁end'),
  readHeader,
};

/**
 * DeepSeek calls, V3 / R1: `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"city":"Paris"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>`,
 * and V3.1: `<｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city":"Paris"}<｜tool▁call▁end｜>`
 * (vLLM's `deepseek_v3` and `deepseek_v31` parsers). The tokens are also taken with ASCII bars
 * (`<|tool▁call▁begin|>`). Unlike vLLM, a call needs no section token around it, the fence is
 * optional, and the arguments must be a JSON object (vLLM passes on whatever text is there).
 */
export function detectDeepSeek(text: string, budget: WorkBudget): Generator<FoundCalls> {
  return detectSectioned(text, budget, DEEPSEEK);
}

/**
 * `word<｜tool▁sep｜>`, then either the arguments (V3.1: `word` is the name) or the name on its
 * own line and the arguments, in a fence or not (V3: `word` is the call's type, `function`).
 * Spaces around `word` and before the V3 name are passed over (` get_weather<｜tool▁sep｜>`).
 */
function readHeader(text: string, from: number, limit: number): CallHeader | undefined {
  const wordStart = skipSpace(text, from, limit);
  const wordEnd = endOfName(text, wordStart, wordStart + MAX_NAME < limit ? wordStart + MAX_NAME : limit);
  const separator = skipSpace(text, wordEnd, limit);
  if (!tokenAt(text, separator, SEPARATOR)) return undefined;
  const after = separator + (SEPARATOR[0]?.length ?? 0);
  const first = skipSpace(text, after, limit);
  if (text.charCodeAt(first) === 0x7b) return { name: text.slice(wordStart, wordEnd), argumentsFrom: first };
  const nameEnd = endOfName(text, first, first + MAX_NAME < limit ? first + MAX_NAME : limit);
  return { name: text.slice(first, nameEnd), argumentsFrom: skipFillers(text, nameEnd, limit, true) };
}
