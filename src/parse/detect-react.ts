import { callFromParts, type CandidateCall } from './call-shapes';
import type { FoundCalls } from './found-calls';
import { isJsonObject } from './json-value';
import { skipSpace } from './marker-finder';
import { callWithPositional } from './pythonic-calls';
import { parseTolerantValue, type WorkBudget } from './tolerant-json';
import type { PositionalParameterLookup } from './types';
import { jsonOrText } from './xml-parameter-value';

/** A line `Action: name`, and the next non-blank one, `Action Input: ...`. */
const ACTION = /^[ \t]*Action[ \t]*:[ \t]*([^\n]*)\n(?:[ \t]*\r?\n)*[ \t]*Action[ \t]+Input[ \t]*:[ \t]*/gm;
const FINAL_ANSWER = /^[ \t]*Final[ \t]+Answer[ \t]*:/m;
const NAME = /^[A-Za-z_][\w.-]{0,127}$/;
/** What a model may wrap the tool's name in: `` `get_weather` ``, `[get_weather]`, quotes. */
const NAME_WRAPPING = /^[`'"[]+|[`'"\]]+$/g;
const FENCE = /```[\w.+-]*[ \t]*\r?\n/y;

/**
 * A ReAct agent's call (LangChain's ReAct prompt, and the many agents that copied it):
 * `Action: get_weather` on a line, then `Action Input: {"city": "Paris"}` on the next (the object
 * may be fenced, or span lines). Only the first action counts: what a model writes after it
 * (`Observation:` and more) it made up instead of waiting for the tool's result. No action after a
 * `Final Answer:` counts either: the model has answered. An input that is not an object
 * (`Action Input: Paris`) is the call's one positional argument, named by `positional` (see
 * `callWithPositional`). The `Thought:` before stays in the remaining text, as the model's text.
 */
export function* detectReAct(text: string, budget: WorkBudget, positional?: PositionalParameterLookup): Generator<FoundCalls> {
  if (!text.includes('Action')) return;
  ACTION.lastIndex = 0;
  const action = ACTION.exec(text);
  if (action === null || budget.remaining <= 0) return;
  const answered = FINAL_ANSWER.exec(text);
  if (answered !== null && answered.index < action.index) return;
  const name = action[1]!.trim().replace(NAME_WRAPPING, '');
  if (!NAME.test(name)) return;
  const input = readInput(text, action.index + action[0].length, name, budget, positional);
  if (input !== undefined) yield { start: action.index + action[0].length - action[0].trimStart().length, end: input.end, calls: [input.call], format: 'react' };
}

/** The call of `name` with the input at `at`, and where the input ends; undefined when it is none. */
function readInput(text: string, at: number, name: string, budget: WorkBudget, positional: PositionalParameterLookup | undefined): { call: CandidateCall; end: number } | undefined {
  FENCE.lastIndex = at;
  const fenced = FENCE.exec(text) !== null;
  const from = skipSpace(text, fenced ? FENCE.lastIndex : at, text.length);
  if (text.charCodeAt(from) !== 0x7b) {
    const lineEnd = text.indexOf('\n', at);
    const line = text.slice(at, lineEnd < 0 ? text.length : lineEnd).trimEnd();
    const call = line.length === 0 ? callFromParts(name, new Map()) : callWithPositional(name, new Map(), [jsonOrText(line)], positional);
    return call === undefined ? undefined : { call, end: at + line.length };
  }
  const parsed = parseTolerantValue(text, from, text.length, { budget });
  if (!parsed.ok) {
    const call = parsed.reason === 'truncated' ? callFromParts(name, new Map()) : undefined;
    return call === undefined ? undefined : { call: { ...call, cutOff: true }, end: text.length };
  }
  const call = isJsonObject(parsed.value) ? callFromParts(name, parsed.value, undefined, parsed) : undefined;
  if (call === undefined) return undefined;
  const after = skipSpace(text, parsed.end, text.length);
  return { call, end: fenced && text.startsWith('```', after) ? after + 3 : parsed.end };
}
