import { fromJson, ScalarType, type DescMessage, type JsonValue } from '@bufbuild/protobuf';
import { ToolSpecSchema, type ToolSpec } from '../../gen/dispatch/v1/tool_pb';

const ENUMS: Readonly<Record<string, string>> = { effect: 'EFFECT_' };
/** The short names an enum field takes in YAML. */
const ENUM_NAMES: Readonly<Record<string, readonly string[]>> = { effect: ['read_only', 'side_effect'] };
const UINT_FIELDS = ['timeout_ms', 'max_result_chars', 'memoize_ttl_seconds'];
/** Scalars fromJson would also take as text ("3"): the YAML gives them as numbers or booleans. */
const NOT_TEXT = new Set([ScalarType.STRING, ScalarType.BYTES]);

/**
 * The first key of a message in YAML form (`raw`) that fromJson would take but the config does
 * not: a camelCase JSON name (`timeoutMs`, which also escaped the checks of the snake_case key),
 * or a number or boolean written as text (`max_attempts: "3"`). Nested messages are checked too.
 */
function strayKey(raw: Readonly<Record<string, unknown>>, desc: DescMessage, prefix = ''): { path: string; problem: string } | undefined {
  for (const [key, value] of Object.entries(raw)) {
    const path = `${prefix}${key}`;
    const field = desc.fields.find((f) => f.name === key);
    const camel = field ? undefined : desc.fields.find((f) => f.jsonName === key);
    if (camel) return { path, problem: `unknown key "${key}" (did you mean ${camel.name}?)` };
    if (!field || value === null || value === undefined) continue;
    if (field.fieldKind === 'scalar' && !NOT_TEXT.has(field.scalar) && typeof value === 'string') {
      return { path, problem: `must be ${field.scalar === ScalarType.BOOL ? 'true or false' : 'a number'}, not text: got ${JSON.stringify(value).slice(0, 100)}` };
    }
    if (field.fieldKind === 'message' && typeof value === 'object' && !Array.isArray(value)) {
      const inner = strayKey(value as Record<string, unknown>, field.message, `${path}.`);
      if (inner) return inner;
    }
  }
  return undefined;
}

/**
 * A ToolSpec from its YAML form: the proto's snake_case names, the executor as one key, enums by
 * short name (`effect: read_only`). Returns the spec or a problem with its path inside the tool.
 */
export function toolFromYaml(raw: unknown): { spec: ToolSpec } | { path: string; problem: string } {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { path: '', problem: 'a tool must be a mapping' };
  const json: Record<string, unknown> = { ...(raw as Record<string, unknown>) };
  const stray = strayKey(json, ToolSpecSchema);
  if (stray) return stray;
  for (const [field, prefix] of Object.entries(ENUMS)) {
    const value = json[field];
    if (value === undefined || value === null || (typeof value === 'string' && value.startsWith(prefix))) continue;
    const known = ENUM_NAMES[field]!;
    if (typeof value !== 'string' || !known.includes(value.toLowerCase())) return { path: field, problem: `must be ${known.join(' or ')}, got ${JSON.stringify(value).slice(0, 100)}` };
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
