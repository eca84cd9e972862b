/**
 * Which dialect the calls in a model's output were written in; `none` when nothing was found.
 * `qwen_xml` is Qwen3-Coder's `<function=name><parameter=key>value</parameter></function>`,
 * `glm_xml` GLM-4.5's `<tool_call>name<arg_key>key</arg_key><arg_value>value</arg_value></tool_call>`,
 * `harmony` gpt-oss's `<|channel|>commentary to=functions.name<|message|>{...}<|call|>`,
 * `deepseek` DeepSeek V3/R1/V3.1's `<｜tool▁call▁begin｜>...<｜tool▁sep｜>...`, `deepseek_dsml`
 * DeepSeek V3.2's `<｜DSML｜invoke name="name"><｜DSML｜parameter name="key" string="true">...`,
 * `minimax_xml` MiniMax-M2's `<minimax:tool_call><invoke name="name"><parameter name="key">...`,
 * `anthropic_xml` the same tags in Anthropic's `<function_calls>` block,
 * `pythonic` Llama 3.2/4's and LFM2's `[name(key=value, ...)]`, `gemma` Gemma 4's
 * `<|tool_call>call:name{key:<|"|>value<|"|>}<tool_call|>` (FunctionGemma's with `<escape>`),
 * `kimi` Kimi K2's `<|tool_call_begin|>functions.name:0<|tool_call_argument_begin|>{...}` and
 * `kimi_xtml` Kimi K3's `<|open|>call tool="name"<|sep|><|open|>argument key="k" type="string"<|sep|>...`,
 * `tool_code` Gemma 3's pythonic calls in a ```` ```tool_code ```` fence, `functionary` Functionary
 * v3.2's `>>>name\n{...}`, `react` a ReAct agent's `Action: name\nAction Input: {...}` and
 * `react_json` LangChain's JSON agents' `{"action": "name", "action_input": {...}}`.
 */
export type ParseFormat =
  | 'hermes'
  | 'llama'
  | 'mistral'
  | 'openai'
  | 'markdown'
  | 'qwen_xml'
  | 'glm_xml'
  | 'harmony'
  | 'deepseek'
  | 'deepseek_dsml'
  | 'minimax_xml'
  | 'anthropic_xml'
  | 'pythonic'
  | 'gemma'
  | 'kimi'
  | 'kimi_xtml'
  | 'tool_code'
  | 'functionary'
  | 'react'
  | 'react_json'
  | 'none';

/** One tool call recovered from raw model output (the proto's `ParsedToolCall`). */
export interface ParsedCall {
  /** The id the model gave the call, or `call_` plus 24 random alphanumerics. */
  id: string;
  name: string;
  /**
   * Compact JSON text of the arguments object; when the model sent arguments as a string that does
   * not decode, that string as it was, so validation can report it.
   */
  arguments: string;
}

/** What `parseToolCalls` found: the calls, the text around them, and the dialect that matched. */
export interface ParseResult {
  calls: ParsedCall[];
  /**
   * The input with the spans of the returned calls removed, trimmed. A span holding calls that
   * are not returned (naming tools not offered, or past `maxCalls`) beside returned ones stays
   * whole, so those calls do not vanish unseen.
   */
  remainingText: string;
  /** The dialect of the first call: marked dialects (tags, `[TOOL_CALLS]`) may be mixed. */
  format: ParseFormat;
  /**
   * What was found and not returned, left in the remaining text: calls of tools not offered, calls
   * cut off, calls past `maxCalls`, and the first call marker that did not read as a call
   * (malformed). A backend can tell the model, instead of taking its call for text. Absent when none.
   */
  warnings?: string[];
}

/** Bounds for `parseToolCalls`. */
export interface ParseOptions {
  /**
   * Texts longer than this (in UTF-16 code units) are not searched: the result is `none`.
   * @default 4194304 (4 MiB, the default gRPC message limit)
   */
  readonly maxInputChars?: number;
  /**
   * At most this many calls are returned. Calls after the limit stay in `remainingText`: those
   * in their own spans (tags, objects), and an array of calls that crosses it, whole, though only
   * its calls before the limit are returned. The service's
   * calls-per-turn limit (128 by default) is enforced later, by Dispatch.
   * @default 1024
   */
  readonly maxCalls?: number;
  /**
   * The parameters of a tool whose values are text, by the tool's name, for the dialects that
   * write a value bare between tags (`qwen_xml`, `glm_xml`): there `12345` or `true` for a string
   * parameter (a zip code, a title) stays that text instead of being read as JSON, which the tool's
   * schema would refuse. A name it answers `undefined` for (an unknown tool), and the parse without
   * it, read values as before. Asked at most once per distinct name per parse (see
   * `textParametersOf` to build an answer from a tool's input schema).
   * @default none (every value read as JSON when it is strict JSON)
   */
  readonly textParameters?: TextParameterLookup;
  /**
   * The parameters positional arguments fill, in order, by the tool's name, for the dialects that
   * may write a call's arguments without their names (pythonic calls: `get_weather("Paris")`, a
   * ReAct `Action Input: Paris`): such a call is returned only when this names every argument
   * (see `positionalParametersOf` to build an answer from a tool's input schema); otherwise it is
   * left in the remaining text with a warning. Asked at most once per distinct name per parse.
   * @default none (a call with positional arguments is never returned)
   */
  readonly positionalParameters?: PositionalParameterLookup;
  /**
   * Told of any internal error (a defect: the parser is designed to be total), after which the
   * result is `none`. For logging; what it throws is ignored.
   */
  readonly onInternalError?: (error: unknown) => void;
}

/**
 * How a parameter's value is read when its tool asks for text: `text`, as written (less one line
 * end each side); `text_or_null` (a schema type `["string", "null"]`) the same, except that the
 * exact text `null` is null.
 */
export type TextParameter = 'text' | 'text_or_null';

/** A tool's parameters whose values are text, by key. */
export type TextParameters = ReadonlyMap<string, TextParameter>;

/** The text parameters of the tool of a name, or `undefined` when the name is no tool known. */
export type TextParameterLookup = (tool: string) => TextParameters | undefined;

/** The parameters a tool's positional arguments fill, in order, or `undefined` when the name is no tool known. */
export type PositionalParameterLookup = (tool: string) => readonly string[] | undefined;
