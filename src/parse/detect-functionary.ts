import { callFromParts } from './call-shapes';
import type { FoundCalls } from './found-calls';
import { isJsonObject } from './json-value';
import { createMarkerFinder, skipSpace } from './marker-finder';
import { parseTolerantValue, type WorkBudget } from './tolerant-json';

/** What opens each message of Functionary v3.2, before its recipient: `all` (the user) or a tool. */
const HEADER = '>>>';
const TO_USER = 'all';
const NAME = /[A-Za-z_][\w.-]{0,127}/y;
/** Functionary's code interpreter: its arguments may be raw code, not JSON. */
const PYTHON = 'python';

/**
 * Functionary v3.2's calls (MeetKai; llama.cpp's `functionary_v3_2` parser): each a header
 * `>>>name` on a line of its own, then the arguments as a JSON object, several in a row
 * (`>>>get_weather\n{"city": "Paris"}\n>>>get_time\n{}`). `>>>all` opens text for the user,
 * which is no call. The text may begin without the first `>>>` when the server's prompt ended
 * with it (`get_weather\n{...}`): such a call `requiresOffer`, as a name and an object alone
 * could be prose. The `python` tool's message may hold raw code instead of JSON (Functionary's
 * code interpreter): after a `>>>` header it is a call of `python` with `{"code": ...}`, the code
 * running to the text's end (as llama.cpp reads it: a `>>>` in the code, a doctest's, is code), so
 * no call follows it. Other arguments that are not an object are no call; arguments the text's end
 * cut off are `cutOff`.
 */
export function* detectFunctionary(text: string, budget: WorkBudget): Generator<FoundCalls> {
  const first = skipSpace(text, 0, text.length);
  const headers = createMarkerFinder(text, HEADER);
  let from = 0;
  if (!text.startsWith(HEADER, first)) {
    const call = readMessage(text, first, budget);
    if (call !== undefined) {
      yield { ...call, requiresOffer: true };
      from = call.end;
    }
  }
  for (let at = headers.next(from); at >= 0 && budget.remaining > 0; at = headers.next(from)) {
    const call = readMessage(text, at + HEADER.length, budget) ?? rawPython(text, at + HEADER.length);
    from = call === undefined ? at + HEADER.length : call.end;
    if (call !== undefined) yield { ...call, start: at };
  }
}

/** A message to `python` at `at` whose arguments are raw code (`python\nprint(1)`): a call with `{"code": ...}` to the text's end; undefined otherwise. */
function rawPython(text: string, at: number): FoundCalls | undefined {
  const body = text.startsWith(PYTHON, at) ? lineEnd(text, at + PYTHON.length) : -1;
  if (body < 0) return undefined;
  // The code as written, its first line's indentation kept; only the space after it is not code.
  const code = text.slice(body).trimEnd();
  if (code.trim() === '' || text.charCodeAt(skipSpace(text, body, text.length)) === 0x7b) return undefined;
  const call = callFromParts(PYTHON, new Map([['code', code]]));
  return call === undefined ? undefined : { start: at, end: text.length, calls: [call], format: 'functionary' };
}

/** The call whose recipient's name is at `at` (`name\n{...}`), its span from `at`; undefined when it is none. */
function readMessage(text: string, at: number, budget: WorkBudget): FoundCalls | undefined {
  NAME.lastIndex = at;
  const name = NAME.exec(text)?.[0];
  if (name === undefined || name === TO_USER) return undefined;
  const body = lineEnd(text, at + name.length);
  if (body < 0) return undefined;
  const pos = skipSpace(text, body, text.length);
  if (text.charCodeAt(pos) !== 0x7b) return undefined;
  const parsed = parseTolerantValue(text, pos, text.length, { budget });
  if (!parsed.ok) {
    const call = parsed.reason === 'truncated' ? callFromParts(name, new Map()) : undefined;
    return call === undefined ? undefined : { start: at, end: text.length, calls: [{ ...call, cutOff: true }], format: 'functionary' };
  }
  const call = isJsonObject(parsed.value) ? callFromParts(name, parsed.value, undefined, parsed) : undefined;
  return call === undefined ? undefined : { start: at, end: parsed.end, calls: [call], format: 'functionary' };
}

/** Where the line after a recipient's name ending at `pos` begins (only blanks may follow the name), or -1. */
function lineEnd(text: string, pos: number): number {
  while (text.charCodeAt(pos) === 0x20 || text.charCodeAt(pos) === 0x09 || text.charCodeAt(pos) === 0x0d) pos++;
  return text.charCodeAt(pos) === 0x0a ? pos + 1 : -1;
}
