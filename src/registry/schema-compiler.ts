import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { RE2 } from 're2-wasm';
import { jsonDepth } from '../json';
import { refusedDefault } from './schema-defaults';

/** Compiles tool input schemas: draft 2020-12, defaults applied, no remote references. */
export interface SchemaCompiler {
  /** Compiles schema text, throwing an Error with a precise message when it cannot. */
  compile(schemaText: string): { schema: Record<string, unknown>; validate: ValidateFunction };
}

const MAX_SCHEMA_DEPTH = 32;

/**
 * `pattern` and `patternProperties` run on RE2 (linear time), so a schema's regular expression can
 * never take exponential time on hostile arguments (ReDoS). RE2 has no lookaround or backreferences;
 * a schema using them does not compile.
 */
const linearRegExp = Object.assign((pattern: string, flags: string) => internedRE2(pattern, flags.includes('u') ? flags : `${flags}u`), { code: 'require("re2-wasm").RE2' });

/**
 * Distinct patterns this process compiles at most. re2-wasm's memory is fixed (16 MiB) and an
 * RE2 object's is never freed (no finalizer), so each compile of a pattern used to take some for
 * good: ~13,500 compiles of a one-pattern schema (tools re-registered, or reloaded from Redis at
 * every reconnection) left none, and every schema with a pattern failed to compile from then on.
 */
export const MAX_DISTINCT_PATTERNS = 5_000;

/** One RE2 per distinct pattern and flags, shared by every schema using it (used with `test` only: stateless). */
const interned = new Map<string, RE2>();

function internedRE2(pattern: string, flags: string): RE2 {
  const key = `${flags}/${pattern}`;
  let re = interned.get(key);
  if (re) return re;
  if (interned.size >= MAX_DISTINCT_PATTERNS) throw new Error(`this process already holds ${MAX_DISTINCT_PATTERNS} distinct patterns; use fewer distinct "pattern" keywords`);
  re = new RE2(pattern, flags);
  interned.set(key, re);
  return re;
}

/** Creates a compiler that refuses schemas larger than `maxSchemaBytes`. */
export function createSchemaCompiler(maxSchemaBytes: number): SchemaCompiler {
  const ajv = new Ajv2020({
    allErrors: true,
    verbose: true,
    useDefaults: true,
    strict: false,
    validateSchema: true,
    addUsedSchema: false,
    code: { regExp: linearRegExp },
    // loadSchema is deliberately absent: a $ref to anything outside the schema fails to compile.
  });
  addFormats(ajv);
  return {
    compile(schemaText) {
      const text = schemaText.trim() === '' ? '{"type":"object"}' : schemaText;
      if (Buffer.byteLength(text) > maxSchemaBytes) {
        throw new Error(`input_schema is ${Buffer.byteLength(text)} bytes, over the limit of ${maxSchemaBytes}`);
      }
      if (jsonDepth(text) > MAX_SCHEMA_DEPTH) {
        throw new Error(`input_schema nests deeper than ${MAX_SCHEMA_DEPTH} levels`);
      }
      let schema: unknown;
      try {
        schema = JSON.parse(text);
      } catch (error) {
        throw new Error(`input_schema is not valid JSON: ${(error as Error).message}`);
      }
      if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) {
        throw new Error('input_schema must be a JSON object');
      }
      try {
        const validate = ajv.compile(schema as object);
        const refused = refusedDefault(ajv, schema as Record<string, unknown>);
        if (refused) throw new Error(refused);
        return { schema: schema as Record<string, unknown>, validate };
      } catch (error) {
        throw new Error(`input_schema does not compile: ${(error as Error).message}`);
      } finally {
        // Ajv keeps every schema it compiled (keyed by the object) for ever: a tool replaced or
        // removed would leave its schema and code behind. The validate function needs neither.
        ajv.removeSchema(schema as object);
      }
    },
  };
}
