import { fromJson, type JsonValue } from '@bufbuild/protobuf';
import { ToolSpecSchema, type ToolSpec } from '../../gen/dispatch/v1/tool_pb';

const ENUMS: Readonly<Record<string, string>> = { effect: 'EFFECT_' };
/** The short names an enum field takes in YAML. */
const ENUM_NAMES: Readonly<Record<string, readonly string[]>> = { effect: ['read_only', 'side_effect'] };
const UINT_FIELDS = ['timeout_ms', 'max_result_chars', 'memoize_ttl_seconds'];

/**
 * A ToolSpec from its YAML form: the proto's snake_case names, the executor as one key, enums by
 * short name (`effect: read_only`). Returns the spec or a problem with its path inside the tool.
 */
export function toolFromYaml(raw: unknown): { spec: ToolSpec } | { path: string; problem: string } {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { path: '', problem: 'a tool must be a mapping' };
  const json: Record<string, unknown> = { ...(raw as Record<string, unknown>) };
  for (const [field, prefix] of Object.entries(ENUMS)) {
    const value = json[field];
    if (typeof value !== 'string' || value.startsWith(prefix)) continue;
    const known = ENUM_NAMES[field]!;
    if (!known.includes(value.toLowerCase())) return { path: field, problem: `must be ${known.join(' or ')}, got ${JSON.stringify(value).slice(0, 100)}` };
    json[field] = `${prefix}${value.toUpperCase()}`;
  }
  for (const field of UINT_FIELDS) {
    const value = json[field];
    if (value !== undefined && (typeof value !== 'number' || !Number.isInteger(value) || value < 0)) {
      return { path: field, problem: `must be a non-negative integer, got ${JSON.stringify(value)}` };
    }
  }
  if (json.input_schema !== undefined && typeof json.input_schema !== 'string') {
    json.input_schema = JSON.stringify(json.input_schema);
  }
  if (json.worker === null) json.worker = {};
  try {
    return { spec: fromJson(ToolSpecSchema, json as JsonValue) };
  } catch (error) {
    const message = (error as Error).message.replace(/^cannot decode message dispatch\.v1\.ToolSpec from JSON: /, '');
    const key = /key "([^"]+)" is unknown/.exec(message)?.[1];
    return { path: key ?? '', problem: key ? `unknown key "${key}"` : message };
  }
}
