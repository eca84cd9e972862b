import type { ToolSpec } from '../../gen/dispatch/v1/tool_pb';
import { codePointLength, shortened } from '../pipeline/bound-result';

/**
 * The longest description, in characters (code points). Descriptions are prose for the model: LLM
 * clients cut them far shorter (OpenAI refuses a function's past 1,024 characters; Claude Code cuts
 * an MCP tool's at 2,048), but MCP servers generated from OpenAPI documents list some of 10-30 KB.
 */
export const MAX_DESCRIPTION_CHARS = 32_768;
/** The longest `http.url`, in bytes: 8 KiB, what common HTTP servers take as a request line. */
export const MAX_URL_BYTES = 8192;
/** The most `http.headers`. */
export const MAX_HEADERS = 64;
/** The longest header name, in bytes. */
export const MAX_HEADER_NAME_BYTES = 256;
/** The longest header value, in bytes: 8 KiB, what common HTTP servers take as a header line. */
export const MAX_HEADER_VALUE_BYTES = 8192;
/** The most `idempotency.key_fields`. */
export const MAX_KEY_FIELDS = 64;
/** The longest JSON pointer into the arguments (resource_key, primary_parameter, each key field), in bytes. */
export const MAX_POINTER_BYTES = 1024;
/** The longest name of something else (fallback_tool, mcp.server, mcp.tool, builtin.name), in characters: a tool name's. */
export const MAX_OTHER_NAME_CHARS = 128;

const bytes = (text: string) => Buffer.byteLength(text);

/** `field` and its size in `unit` when over `max`, as a refusal's words. */
const over = (field: string, size: number, max: number, unit: string) => (size > max ? `${field} is ${size} ${unit}, over the limit of ${max}` : undefined);
const overBytes = (field: string, text: string, max: number) => (text.length * 3 <= max ? undefined : over(field, bytes(text), max, 'bytes'));
const overChars = (field: string, text: string, max: number) => (text.length <= max ? undefined : over(field, codePointLength(text), max, 'characters'));

/**
 * The first field of `spec`, other than its name and input schema (bounded elsewhere), that is
 * longer or holds more entries than its bound, with its size and the bound; or undefined. A
 * spec's other fields are numbers and booleans (a request is at most max_message_bytes, so a field
 * of megabytes is read by checkSpec's other checks in a few ms).
 */
export function specSizeProblem(spec: ToolSpec): string | undefined {
  const problem = overChars('description', spec.description, MAX_DESCRIPTION_CHARS)
    ?? overBytes('resource_key', spec.resourceKey, MAX_POINTER_BYTES)
    ?? overBytes('primary_parameter', spec.primaryParameter, MAX_POINTER_BYTES)
    ?? overChars('fallback_tool', spec.fallbackTool, MAX_OTHER_NAME_CHARS)
    ?? keyFieldsProblem(spec.idempotency?.keyFields ?? []);
  if (problem !== undefined) return problem;
  const executor = spec.executor;
  switch (executor.case) {
    case 'http':
      return overBytes('http.url', executor.value.url, MAX_URL_BYTES) ?? headersProblem(executor.value.headers);
    case 'mcp':
      return overChars('mcp.server', executor.value.server, MAX_OTHER_NAME_CHARS) ?? overChars('mcp.tool', executor.value.tool, MAX_OTHER_NAME_CHARS);
    case 'builtin':
      return overChars('builtin.name', executor.value.name, MAX_OTHER_NAME_CHARS);
    default:
      return undefined;
  }
}

function keyFieldsProblem(pointers: readonly string[]): string | undefined {
  if (pointers.length > MAX_KEY_FIELDS) return `idempotency.key_fields has ${pointers.length} pointers, over the limit of ${MAX_KEY_FIELDS}`;
  for (const [i, pointer] of pointers.entries()) {
    const problem = overBytes(`idempotency.key_fields[${i}]`, pointer, MAX_POINTER_BYTES);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

function headersProblem(headers: Readonly<Record<string, string>>): string | undefined {
  const entries = Object.entries(headers);
  if (entries.length > MAX_HEADERS) return `http.headers has ${entries.length} headers, over the limit of ${MAX_HEADERS}`;
  for (const [name, value] of entries) {
    const problem = overBytes(`http.headers name ${JSON.stringify(shortened(name, 40))}`, name, MAX_HEADER_NAME_BYTES)
      ?? overBytes(`http.headers ${JSON.stringify(name)} value`, value, MAX_HEADER_VALUE_BYTES);
    if (problem !== undefined) return problem;
  }
  return undefined;
}
