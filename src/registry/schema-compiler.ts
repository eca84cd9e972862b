import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { jsonDepth } from '../json';
import { shortened } from '../pipeline/bound-result';
import { addAnnotationFormats, noteUnknownFormats } from './known-formats';
import { useOwnDefaults, withOwnDefaults } from './own-defaults';
import { leasePatterns, type LeaseOptions } from './pattern-pool';
import { refusedDefault } from './schema-defaults';
import { refLoop } from './ref-loops';
import { checkSchemaCost } from './schema-cost';
import { SchemaIndex } from './schema-index';
import { useLinearUniqueItems } from './unique-items';

/** Compiles tool input schemas: draft 2020-12, defaults applied, no remote references. */
export interface SchemaCompiler {
  /**
   * Compiles schema text for `owner` (a tenant; "" for the operator's tools, the default),
   * throwing an Error with a precise message when it cannot. Its patterns count for the owner
   * until `release` is called (the tool removed or replaced); `lease` names the releases of the
   * tools it replaces, and whether the owner's pattern bound applies.
   */
  compile(schemaText: string, owner?: string, lease?: LeaseOptions): CompiledSchema;
}

/** A compiled schema, and what gives back its patterns. */
export interface CompiledSchema {
  readonly schema: Record<string, unknown>;
  readonly validate: ValidateFunction;
  readonly release: () => void;
  /** The `format`s it names that nothing checks (annotations), each with where it is: for a log line. */
  readonly unknownFormats: readonly string[];
}

const MAX_SCHEMA_DEPTH = 32;
/**
 * The longest compile error quoted: Ajv's and RE2's quote the schema's own text (a `pattern`, a
 * `$ref` target), which may be most of its 256 KiB.
 */
const MAX_ERROR_CHARS = 1_000;

/**
 * Options of every Ajv compiling schemas, but for their regular expressions (see `compile`).
 * ownProperties: `required`, `properties` and the like look at the arguments' own properties only;
 * without it `required: ["toString"]` passed `{}` (every object inherits toString). logger: false,
 * as Ajv's logger is the console: its lines were raw text in the JSON log.
 */
const AJV_OPTIONS = { allErrors: true, verbose: true, useDefaults: true, ownProperties: true, strict: false, addUsedSchema: false, logger: false } as const;

/** Creates a compiler that refuses schemas larger than `maxSchemaBytes`. */
export function createSchemaCompiler(maxSchemaBytes: number): SchemaCompiler {
  // Checks schemas against the meta-schema; compiles nothing else, so it keeps nothing per schema.
  const meta = new Ajv2020(AJV_OPTIONS);
  addFormats(meta);
  addAnnotationFormats(meta);
  return {
    compile(schemaText, owner = '', lease = {}) {
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
        throw new Error(`input_schema is not valid JSON: ${shortened((error as Error).message, MAX_ERROR_CHARS)}`);
      }
      if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) {
        throw new Error('input_schema must be a JSON object');
      }
      // An Ajv per schema: one keeps every schema, validate function and pattern it compiled for
      // ever (in its code scope, which removeSchema leaves), so a tool removed, replaced or reloaded
      // from Redis left ~20 bytes per byte of schema behind. This one lives as long as the tool.
      // `pattern` and `patternProperties` run on RE2 (linear time), so a schema's regular expression
      // can never take exponential time on hostile arguments (ReDoS). RE2 has no lookaround or
      // backreferences; a schema using them does not compile. loadSchema is deliberately absent: a
      // $ref to anything outside the schema fails to compile.
      const patterns = leasePatterns(owner, lease);
      const regExp = Object.assign((pattern: string, flags: string) => patterns.take(pattern, flags.includes('u') ? flags : `${flags}u`), { code: 'require("re2-wasm").RE2' });
      // optimize: false halves the compile time (0.4 s, not 0.8, for 64 KiB) for the same code size.
      // addUsedSchema: the schema is known by its base URI, so a `$ref` to its root ("#", or its
      // $id: a tree, a filter of nested nodes) resolves; alone in its Ajv, its $ids clash with none.
      const ajv = new Ajv2020({ ...AJV_OPTIONS, addUsedSchema: true, validateSchema: false, code: { regExp, optimize: false } });
      addFormats(ajv);
      addAnnotationFormats(ajv);
      const unknownFormats = new Set<string>();
      noteUnknownFormats(ajv, unknownFormats);
      useLinearUniqueItems(ajv);
      useOwnDefaults(ajv);
      try {
        meta.validateSchema(schema as object, true);
        const index = new SchemaIndex(schema as Record<string, unknown>);
        const loop = refLoop(index);
        if (loop) throw new Error(loop);
        const compiled = withOwnDefaults(index);
        const validate = ajv.compile(compiled);
        // Noted now: refusedDefault compiles subschemas again, under its own key.
        const notes = [...unknownFormats];
        checkSchemaCost(schema as Record<string, unknown>, index);
        const refused = refusedDefault(ajv, schema as Record<string, unknown>, compiled);
        if (refused) throw new Error(refused);
        return { schema: schema as Record<string, unknown>, validate, release: patterns.commit(), unknownFormats: notes };
      } catch (error) {
        patterns.abort();
        throw new Error(`input_schema does not compile: ${shortened((error as Error).message, MAX_ERROR_CHARS)}`);
      }
    },
  };
}
