export { DEFAULT_MAX_INPUT_CHARS, parseToolCalls } from './parse-tool-calls';
export type { ParseFormat, ParseOptions, ParseResult, ParsedCall, PositionalParameterLookup, TextParameter, TextParameterLookup, TextParameters } from './types';
export { textParametersOf } from './schema-text-parameters';
export { positionalParametersOf } from './schema-positional-parameters';
export { parseTolerantValue, MAX_PARSE_DEPTH } from './tolerant-json';
export type { FailedValue, ParseFailureReason, ParsedValue, WorkBudget } from './tolerant-json';
export { JsonNumber, isJsonObject, toCompactJson } from './json-value';
export type { JsonObject, TolerantValue } from './json-value';
export { callIdProblem, createCallId, MAX_CALL_ID_CHARS } from './call-id';
