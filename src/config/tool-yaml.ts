import { fromJson, ScalarType, type DescField, type DescMessage, type JsonValue } from '@bufbuild/protobuf';
import { ToolSpecSchema, type ToolSpec } from '../../gen/dispatch/v1/tool_pb';
import { unknownKeyProblem } from './unknown-key';

const ENUMS: Readonly<Record<string, string>> = { effect: 'EFFECT_' };
/** The short names an enum field takes in YAML. */
const ENUM_NAMES: Readonly<Record<string, readonly string[]>> = { effect: ['read_only', 'side_effect'] };
/** The largest value of a uint32 field (a timeout, a count). */
const MAX_UINT32 = 4_294_967_295;
/** Text fields the YAML may also give as a mapping: the schema, written as YAML rather than JSON text. */
const MAPPING_AS_TEXT = new Set(['input_schema']);
/** The executors of a tool, of which it names exactly one (the proto's `executor` oneof). */
const EXECUTORS = ToolSpecSchema.oneofs.find((o) => o.name === 'executor')!.fields.map((f) => f.name);

type Problem = { path: string; problem: string };

const shown = (value: unknown) => JSON.stringify(value)?.slice(0, 100) ?? String(value);

/** What is wrong with `value` for a scalar field of type `scalar`, in the config's terms; undefined if fine. */
function scalarProblem(scalar: ScalarType, value: unknown): string | undefined {
  switch (scalar) {
    case ScalarType.STRING:
    case ScalarType.BYTES:
      return typeof value === 'string' ? undefined : `must be text, got ${shown(value)} (put it in quotes)`;
    case ScalarType.BOOL:
      if (typeof value === 'boolean') return undefined;
      return typeof value === 'string' ? `must be true or false, not text: got ${shown(value)}` : `must be true or false, got ${shown(value)}`;
    default: {
      // Numbers fromJson would also take as text ("3"): the YAML gives them as numbers.
      if (typeof value === 'string') return `must be a number, not text: got ${shown(value)}`;
      if (typeof value !== 'number' || !Number.isFinite(value)) return `must be a number, got ${shown(value)}`;
      if (scalar === ScalarType.DOUBLE || scalar === ScalarType.FLOAT) return undefined;
      const unsigned = scalar === ScalarType.UINT32 || scalar === ScalarType.FIXED32 || scalar === ScalarType.UINT64 || scalar === ScalarType.FIXED64;
      if (!Number.isInteger(value) || (unsigned && value < 0)) return `must be a ${unsigned ? 'non-negative ' : ''}integer, got ${shown(value)}`;
      if ((scalar === ScalarType.UINT32 || scalar === ScalarType.FIXED32) && value > MAX_UINT32) return `must be at most ${MAX_UINT32}, got ${shown(value)}`;
      return undefined;
    }
  }
}

const isMapping = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The problem of one field's value (not null), checked by the field's kind; nested messages key by key. */
function valueProblem(field: DescField, value: unknown, path: string): Problem | undefined {
  switch (field.fieldKind) {
    case 'scalar': {
      if (MAPPING_AS_TEXT.has(field.name)) {
        // `true` or a list is no schema dispatch takes; "put it in quotes" would only move the refusal.
        if (isMapping(value) || typeof value === 'string') return undefined;
        return { path, problem: `must be a JSON Schema object: a mapping, or JSON text of one; got ${shown(value)}` };
      }
      const problem = scalarProblem(field.scalar, value);
      return problem === undefined ? undefined : { path, problem };
    }
    case 'list': {
      if (!Array.isArray(value)) return { path, problem: `must be a list, got ${shown(value)}` };
      if (field.listKind !== 'scalar') return undefined;
      for (const [i, item] of value.entries()) {
        const problem = scalarProblem(field.scalar, item);
        if (problem !== undefined) return { path: `${path}[${i}]`, problem };
      }
      return undefined;
    }
    case 'map': {
      if (!isMapping(value)) return { path, problem: `must be a mapping, got ${shown(value)}` };
      if (field.mapKind !== 'scalar') return undefined;
      for (const [key, item] of Object.entries(value)) {
        const problem = scalarProblem(field.scalar, item);
        // A header's value is a credential as often as not (an all-digit API key): not quoted.
        if (problem !== undefined) return { path: `${path}.${key}`, problem: field.name === 'headers' ? `must be text, got a ${Array.isArray(item) ? 'list' : typeof item} (put it in quotes)` : problem };
      }
      return undefined;
    }
    case 'message':
      if (!isMapping(value)) return { path, problem: `must be a mapping, got ${shown(value)}` };
      return keyProblem(value, field.message, `${path}.`);
    default:
      // An enum (effect) is read by its short name in toolFromYaml.
      return undefined;
  }
}

/**
 * The first key of a message in YAML form (`raw`) that the config does not take, at any depth,
 * with its full path: a key the message lacks (`urll`, or the camelCase JSON name `timeoutMs`
 * fromJson would take) with the key it likely misspells, or a value of the wrong kind (a number
 * written as text, `max_attempts: "3"`; a negative count).
 */
function keyProblem(raw: Readonly<Record<string, unknown>>, desc: DescMessage, prefix = ''): Problem | undefined {
  const known = desc.fields.map((f) => f.name);
  for (const [key, value] of Object.entries(raw)) {
    const path = `${prefix}${key}`;
    const field = desc.fields.find((f) => f.name === key);
    if (!field) return { path, problem: unknownKeyProblem(key, known) };
    if (value === null || value === undefined) continue;
    const problem = valueProblem(field, value, path);
    if (problem) return problem;
  }
  return undefined;
}

/** A tool that names two executors: fromJson's "cannot decode oneof" said it in the proto's terms. */
function executorProblem(json: Readonly<Record<string, unknown>>): Problem | undefined {
  // Counted when left empty too (`builtin:`): fromJson counts it ("oneof set multiple times"), and
  // `worker:` with no value is the worker executor (its message has no fields).
  const given = Object.keys(json).filter((name) => EXECUTORS.includes(name) && json[name] !== undefined);
  if (given.length < 2) return undefined;
  return { path: given[1]!, problem: `a tool has exactly one executor, one of ${EXECUTORS.join(', ')}; this one also has ${given[0]}` };
}

/**
 * `retry: { max_attempts: 0 }`, which reads as no attempt (or no retry) but is the proto's zero: the
 * default, 2 attempts. Only the file can tell it from a field left out (RegisterTools cannot).
 */
function noAttempts(json: Readonly<Record<string, unknown>>): Problem | undefined {
  if (!isMapping(json.retry) || json.retry.max_attempts !== 0) return undefined;
  return { path: 'retry.max_attempts', problem: 'must be at least 1: it counts every attempt, the first included (1: no retry); leave it out for the default, 2' };
}

/**
 * A ToolSpec from its YAML form: the proto's snake_case names, the executor as one key, enums by
 * short name (`effect: read_only`). Returns the spec or a problem with its path inside the tool.
 */
export function toolFromYaml(raw: unknown): { spec: ToolSpec } | Problem {
  if (!isMapping(raw)) return { path: '', problem: 'a tool must be a mapping' };
  const json: Record<string, unknown> = { ...raw };
  const stray = keyProblem(json, ToolSpecSchema) ?? executorProblem(json) ?? noAttempts(json);
  if (stray) return stray;
  for (const [field, prefix] of Object.entries(ENUMS)) {
    const value = json[field];
    if (value === undefined || value === null) continue;
    // The proto's own names (EFFECT_READ_ONLY) are taken too; a made-up one was fromJson's jargon.
    const protoNames = ToolSpecSchema.fields.find((f) => f.name === field)!.enum!.values.map((v) => v.name);
    if (typeof value === 'string' && protoNames.includes(value)) continue;
    const known = ENUM_NAMES[field]!;
    if (typeof value !== 'string' || !known.includes(value.toLowerCase())) return { path: field, problem: `must be ${known.join(' or ')}, got ${shown(value)}` };
    json[field] = `${prefix}${value.toUpperCase()}`;
  }
  if (isMapping(json.input_schema)) json.input_schema = JSON.stringify(json.input_schema);
  if (json.worker === null) json.worker = {};
  try {
    return { spec: fromJson(ToolSpecSchema, json as JsonValue) };
  } catch (error) {
    // Nothing the checks above let through is known to fail here; should it, without the proto's type names.
    return { path: '', problem: (error as Error).message.replace(/^cannot decode [\w. ]+ from JSON: /, '') };
  }
}
