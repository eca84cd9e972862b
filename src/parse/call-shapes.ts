import { isJsonObject, toCompactJson, type JsonObject, type TolerantValue } from './json-value';
import { callIdProblem } from './call-id';
import type { ParsedValue } from './parse-outcome';
import { parseTolerantValue } from './tolerant-json';
import type { ParseFormat } from './types';

/** A call recognised in a parsed value, before the offered-tools filter and id assignment. */
export interface CandidateCall {
  readonly name: string;
  /** Compact JSON text, or the undecodable string the model sent. */
  readonly arguments: string;
  /** The model's own id for the call, when it gave one. */
  readonly id?: string;
  /** The JSON shape it came in, which names the format when no marker did. */
  readonly shape: Extract<ParseFormat, 'llama' | 'openai'>;
  /**
   * Set when the text ended inside the call before its arguments or inside them (or just after
   * arguments that are a literal or number, which nothing ended; see `isCutOff`): it is never
   * returned, and the text of the span holding it stays in the remaining text, as for a call not
   * offered.
   */
  readonly cutOff?: true;
  /**
   * Where its arguments were read from when not `arguments` or `parameters` (only under a marker):
   * another key (`"args"`), or `the object's other keys` of a flat call. Said in a warning.
   */
  readonly readFrom?: string;
  /** A cut-off call whose text lies after its span's end (an array's element after the complete ones): the span's text need not stay for it. */
  readonly beyondSpan?: true;
  /**
   * Set when the call was written with arguments that have no names (`get_weather("Paris")`) and
   * its tool's schema does not name them (see `positionalParametersOf`): it is never returned, and
   * its text stays, with a warning, as for a call cut off.
   */
  readonly unnamedArguments?: true;
}

/**
 * The objects a parse's limit closed, whether that limit was the end of the text, and the literal
 * or number the text ended in.
 */
export type ClosedAtLimit = Pick<ParsedValue, 'containersClosedAtLimit' | 'limitEndsText' | 'scalarAtTextEnd'>;

const MAX_NAME_LENGTH = 256;

// Builtins bound once: in a sandbox such as the test runner's, each global lookup costs more
// than the work around it, and these run once per token.
const { isArray } = Array;
const NONE_CLOSED: ClosedAtLimit = { containersClosedAtLimit: [], limitEndsText: false };

/**
 * The calls a parsed value describes: `{name, arguments|parameters}` (Hermes, Llama, Mistral),
 * `{tool_name, parameters}` (Cohere, its `tool_call_id` an id), `{function: {name, arguments}}`
 * and `{tool_calls: [...]}` (OpenAI), or an array of these.
 * `explicit` says a marker already announced a call (a `<tool_call>` tag, `[TOOL_CALLS]`):
 * then the arguments key may be absent and an array may mix in non-calls. Without a marker
 * the shape must be complete, so ordinary JSON in prose is not mistaken for a call. A call the
 * parse's limit cut off is `cutOff` (see `isCutOff`).
 */
export function callsFromValue(value: TolerantValue, explicit: boolean, closed: ClosedAtLimit = NONE_CLOSED): CandidateCall[] {
  if (isArray(value)) {
    const calls = value.map((item) => (isJsonObject(item) ? callFromObject(item, explicit, closed) : undefined));
    const found = calls.filter((call): call is CandidateCall => call !== undefined);
    return explicit || found.length === calls.length ? found : [];
  }
  if (!isJsonObject(value)) return [];
  const list = value.get('tool_calls');
  if (isArray(list)) return callsFromValue(list, true, closed);
  const call = callFromObject(value, explicit, closed);
  return call === undefined ? [] : [call];
}

/**
 * A call from a name and an arguments value parsed separately (Mistral `name[ARGS]{...}`, Llama
 * `<function=name>{...}`), `closed` telling what the arguments' parse closed at its limit.
 */
export function callFromParts(name: string, args: TolerantValue, id?: string, closed = NONE_CLOSED): CandidateCall | undefined {
  const cleanName = plausibleName(name);
  if (cleanName === undefined) return undefined;
  const call = { name: cleanName, arguments: argumentsText(args), id: plausibleId(id), shape: 'llama' } as const;
  return isCutOff(undefined, args, closed) ? { ...call, cutOff: true } : call;
}

/**
 * Whether a call, `holder` holding its arguments `args`, was cut off: the limit closed `holder`
 * with no arguments key in it (the text ended before them; they are not `{}`, the model got no
 * further), or the end of the text closed the arguments object or array (`{"env":"staging"` may
 * have gone on `,"dry_run":true`, `["staging","prod"` on `,"eu"`). Arguments that closed themselves are complete, though the text
 * ended before the braces around them: what a call holds beside its arguments changes nothing.
 * A closing tag or the next call's marker, unlike the end of the text, shows where the model
 * ended the arguments, so a brace missing there is supplied. Arguments that are a literal or a
 * number the text ends in (`"arguments":null`, `[ARGS]12`) are cut off too: nothing ended them,
 * and `null` may have been the start of more; once something ended one (a space, a comma, a
 * brace, a closing tag) it is as complete as arguments that closed themselves.
 */
function isCutOff(holder: JsonObject | undefined, args: TolerantValue | undefined, closed: ClosedAtLimit): boolean {
  const { containersClosedAtLimit: cut, limitEndsText, scalarAtTextEnd: scalar } = closed;
  if (scalar !== undefined && scalar.holder === holder && (holder === undefined || scalar.key === argumentsKey(holder, true))) return true;
  if (cut.length === 0) return false;
  if (args === undefined) return holder !== undefined && cut.includes(holder);
  return limitEndsText && cut.some((container) => container === args);
}

function callFromObject(object: JsonObject, explicit: boolean, closed: ClosedAtLimit): CandidateCall | undefined {
  const id = plausibleId(object.get('id'));
  const fn = object.get('function');
  if (isJsonObject(fn)) {
    const name = plausibleName(fn.get('name'));
    const args = argumentsOf(fn);
    if (name === undefined || (args === undefined && !explicit)) return undefined;
    // A tool definition in OpenAI's shape (`{"type": "function", "function": {name, description,
    // parameters}}`, a model repeating its tool list) ran as a call with its schema for arguments.
    if (!explicit && !looksLikeCall(fn, args)) return undefined;
    const call = { name, arguments: argumentsText(args ?? null), id, shape: 'openai' } as const;
    return isCutOff(fn, args, closed) ? { ...call, cutOff: true } : call;
  }
  // Cohere's `{tool_call_id, tool_name, parameters}` (Command R's and Command A's action blocks).
  const cohere = !object.has('name') && object.has('tool_name');
  const name = plausibleName(object.get(cohere ? 'tool_name' : 'name'));
  const key = argumentsKey(object, explicit);
  let args = object.get(key);
  if (name === undefined || (args === undefined && !explicit)) return undefined;
  if (!explicit && !looksLikeCall(object, args)) return undefined;
  // Under a marker, a call holding no arguments key but other keys is a flat call: they are its
  // arguments (before, they were dropped and the call ran with `{}`, a probe's send_email too).
  const flat = args === undefined ? flatArguments(object) : undefined;
  if (flat !== undefined) args = flat;
  const readFrom = flat !== undefined ? "the object's other keys" : key === 'arguments' || key === 'parameters' ? undefined : JSON.stringify(key);
  const call = { name, arguments: argumentsText(args ?? null), id: id ?? (cohere ? plausibleId(object.get('tool_call_id')) : undefined), shape: 'llama', ...(readFrom !== undefined && { readFrom }) } as const;
  return isCutOff(object, flat !== undefined ? undefined : args, closed) ? { ...call, cutOff: true } : call;
}

/** Keys a call object holds beside its arguments: its name, id and type. */
const CALL_KEYS: ReadonlySet<string> = new Set(['name', 'tool_name', 'id', 'tool_call_id', 'call_id', 'type', 'index']);

/** A flat call's arguments: its keys but its name, id and type; undefined when it holds none other. */
function flatArguments(object: JsonObject): JsonObject | undefined {
  const rest: JsonObject = new Map([...object].filter(([key]) => !CALL_KEYS.has(key)));
  return rest.size > 0 ? rest : undefined;
}

/**
 * Without a marker, a `{name, parameters}` object is a call only if its arguments are an object
 * (or JSON text) and it has no `description`: that is a tool definition quoted in prose.
 */
function looksLikeCall(object: JsonObject, args: TolerantValue | undefined): boolean {
  if (object.has('description')) return false;
  return args === undefined || args === null || typeof args === 'string' || isJsonObject(args);
}

function argumentsOf(object: JsonObject): TolerantValue | undefined {
  return object.get(argumentsKey(object, false));
}

/**
 * Other keys models put a call's arguments under (a template's or a fine-tune's own), read only
 * under a marker, where the object is a call whatever it holds: before, such a call ran with `{}`.
 */
const ARGUMENT_KEYS = ['args', 'params', 'argument', 'parameter', 'input', 'inputs', 'tool_input', 'kwargs', 'Arguments', 'Parameters', 'arguments_json'];

/** The key a call object holds its arguments under: `arguments`, else `parameters`, else (`aliases`, under a marker) another usual one. */
function argumentsKey(object: JsonObject, aliases: boolean): string {
  if (object.has('arguments')) return 'arguments';
  if (object.has('parameters') || !aliases) return 'parameters';
  return ARGUMENT_KEYS.find((key) => object.has(key)) ?? 'parameters';
}

/**
 * Arguments as compact JSON text. A string is decoded (OpenAI sends arguments as JSON text);
 * one that does not decode to an object is passed on as it was, for validation to report.
 */
function argumentsText(args: TolerantValue): string {
  if (args === null) return '{}';
  if (typeof args !== 'string') return toCompactJson(args);
  const start = skipSpaces(args, 0);
  if (start === args.length) return '{}';
  const parsed = parseTolerantValue(args, start, args.length);
  if (parsed.ok && isJsonObject(parsed.value) && skipSpaces(args, parsed.end) === args.length) {
    return toCompactJson(parsed.value);
  }
  return args;
}

function skipSpaces(text: string, from: number): number {
  let pos = from;
  while (pos < text.length && text.charCodeAt(pos) <= 0x20) pos++;
  return pos;
}

/** A tool name: a string of 1 to 256 characters with no whitespace, quotes or brackets. */
function plausibleName(value: TolerantValue | undefined): string | undefined {
  if (typeof value !== 'string') return undefined;
  const name = value.trim();
  if (name.length === 0 || name.length > MAX_NAME_LENGTH) return undefined;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c <= 0x20 || c === 0x7f || c === 0xa0 || '"\'`{}[]()<>,;'.includes(name.charAt(i))) return undefined;
  }
  return name;
}

/** The model's id when Dispatch would take it (callIdProblem); else the call gets a fresh one. */
function plausibleId(value: TolerantValue | undefined): string | undefined {
  if (typeof value !== 'string') return undefined;
  const id = value.trim();
  return id.length > 0 && callIdProblem(id) === undefined ? id : undefined;
}

/** A call object's name at its start: `{"name": "x"` (or `tool_name`), as a cut-off call keeps it. */
const NAME_FIRST = /^\{\s*"(?:name|tool_name)"\s*:\s*"([^"\\\n]{1,256})"/;

/**
 * The call a text cut off at its end began at `text[start]` (`{"name": "get_time", "arguments":
 * {"tz": "C`), when its name comes first: never returned, it names the call in a warning, so a
 * backend knows the model asked for more than the calls returned (before, an array's complete
 * calls were returned and the cut one vanished, warnings empty).
 */
export function cutOffCall(text: string, start: number): CandidateCall | undefined {
  const name = plausibleName(NAME_FIRST.exec(text.slice(start, start + 300))?.[1]);
  return name === undefined ? undefined : { name, arguments: '', shape: 'llama', cutOff: true };
}
