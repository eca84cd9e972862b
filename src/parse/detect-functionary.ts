import { callFromParts } from './call-shapes';
import type { FoundCalls } from './found-calls';
import { isJsonObject } from './json-value';
import { createMarkerFinder, skipSpace } from './marker-finder';
import { parseTolerantValue, type WorkBudget } from './tolerant-json';

/** What opens each message of Functionary v3.2, before its recipient: `all` (the user) or a tool. */
const HEADER = '>>>';
const TO_USER = 'all';
const NAME = /[A-Za-z_][\w.-]{0,127}/y;

/**
 * Functionary v3.2's calls (MeetKai; llama.cpp's `functionary_v3_2` parser): each a header
 * `>>>name` on a line of its own, then the arguments as a JSON object, several in a row
 * (`>>>get_weather\n{"city": "Paris"}\n>>>get_time\n{}`). `>>>all` opens text for the user,
 * which is no call. The text may begin without the first `>>>` when the server's prompt ended
 * with it (`get_weather\n{...}`): such a call `requiresOffer`, as a name and an object alone
 * could be prose. Arguments that are not an object (the `python` tool's raw code) are no call;
 * arguments the text's end cut off are `cutOff`.
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
    const call = readMessage(text, at + HEADER.length, budget);
    from = call === undefined ? at + HEADER.length : call.end;
    if (call !== undefined) yield { ...call, start: at };
  }
}

/** The call whose recipient's name is at `at` (`name\n{...}`), its span from `at`; undefined when it is none. */
function readMessage(text: string, at: number, budget: WorkBudget): FoundCalls | undefined {
  NAME.lastIndex = at;
  const name = NAME.exec(text)?.[0];
  if (name === undefined || name === TO_USER) return undefined;
  let pos = at + name.length;
  while (text.charCodeAt(pos) === 0x20 || text.charCodeAt(pos) === 0x09 || text.charCodeAt(pos) === 0x0d) pos++;
  if (text.charCodeAt(pos) !== 0x0a) return undefined;
  pos = skipSpace(text, pos + 1, text.length);
  if (text.charCodeAt(pos) !== 0x7b) return undefined;
  const parsed = parseTolerantValue(text, pos, text.length, { budget });
  if (!parsed.ok) {
    const call = parsed.reason === 'truncated' ? callFromParts(name, new Map()) : undefined;
    return call === undefined ? undefined : { start: at, end: text.length, calls: [{ ...call, cutOff: true }], format: 'functionary' };
  }
  const call = isJsonObject(parsed.value) ? callFromParts(name, parsed.value, undefined, parsed) : undefined;
  return call === undefined ? undefined : { start: at, end: parsed.end, calls: [call], format: 'functionary' };
}
