import Ajv2020 from 'ajv/dist/2020';
import standaloneCode from 'ajv/dist/standalone';
import addFormats from 'ajv-formats';
import type { RE2 } from 're2-wasm';
import { re2 } from './re2-lazy';
import { jsonDepth } from '../json';
import { shortened } from '../pipeline/bound-result';
import { addAnnotationFormats, noteUnknownFormats, useLinearUrlFormat } from './known-formats';
import { useOwnDefaults, withOwnDefaults } from './own-defaults';
import type { SchemaPatternBound } from './pattern-pool';
import { refusedDefault } from './schema-defaults';
import { protoMember } from './proto-members';
import { refLoop } from './ref-loops';
import { keywordTypo } from './keyword-typos';
import { rootObjectProblem } from './root-object';
import { checkSchemaCost } from './schema-cost';
import { wrapSchemaSource } from './schema-rewrite';
import { upgradeDraft } from './schema-drafts';
import { SchemaIndex } from './schema-index';
import { useLinearEnum } from './linear-enum';
import { useLinearUniqueItems } from './unique-items';

/** A schema's validate function as module source (Ajv's standalone code), made wherever compiling is cheap to wait for. */
export interface SchemaCode {
  /** CommonJS source exporting the validate function; see schema-module.ts for what it may require. */
  readonly source: string;
  /** `source` rewritten as loadSchemaModule runs it (schema-rewrite.ts), here, off the event loop where compiling is. */
  readonly module: string;
  /** The `format`s it names that nothing checks (annotations), each with where it is: for a log line. */
  readonly unknownFormats: readonly string[];
}

const MAX_SCHEMA_DEPTH = 32;
/**
 * The longest compile error quoted: Ajv's and RE2's quote the schema's own text (a `pattern`, a
 * `$ref` target), which may be most of its 256 KiB.
 */
export const MAX_ERROR_CHARS = 1_000;
/** What the source of a compiled pattern calls (with the pattern and its flags) for its RE2; see schema-module.ts. */
export const PATTERN_MODULE = 'dispatch:pattern';

/**
 * Options of every Ajv compiling schemas, but for their regular expressions (see `generateSchemaCode`).
 * ownProperties: `required`, `properties` and the like look at the arguments' own properties only;
 * without it `required: ["toString"]` passed `{}` (every object inherits toString). logger: false,
 * as Ajv's logger is the console: its lines were raw text in the JSON log.
 */
const AJV_OPTIONS = { allErrors: true, verbose: true, useDefaults: true, ownProperties: true, strict: false, addUsedSchema: false, logger: false } as const;

/** The schema text compiled: an empty one is an object of any properties. */
export const effectiveText = (schemaText: string) => (schemaText.trim() === '' ? '{"type":"object"}' : schemaText);

/** Parses schema text, refusing what is too large, too deep, not JSON or not an object. */
export function parseSchemaText(schemaText: string, maxSchemaBytes: number): Record<string, unknown> {
  const text = effectiveText(schemaText);
  if (Buffer.byteLength(text) > maxSchemaBytes) {
    throw new Error(`input_schema is ${Buffer.byteLength(text)} bytes, over the limit of ${maxSchemaBytes} (limits.max_schema_bytes)`);
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
  return upgradeDraft(schema as Record<string, unknown>);
}

/** The message of every compile failure past parsing. */
export const doesNotCompile = (error: unknown) => `input_schema does not compile: ${shortened((error as Error).message, MAX_ERROR_CHARS)}`;

/** A schema that compiles but would not do what it says (root-object.ts, keyword-typos.ts): its message is whole. */
class SchemaMistake extends Error {}

/**
 * Makes the code generator of one thread: it checks and compiles schema text to module source,
 * throwing an Error with a precise message when it cannot; with `patternBound`, also when the
 * schema has more distinct patterns than its owner could lease; with `checkMistakes` (a tool's
 * schema registered here: another replica's may predate these checks), also when it compiles but
 * would not do what it says: it accepts no object, which a tool's arguments always are
 * (root-object.ts), or it misspells a keyword (keyword-typos.ts). It keeps nothing per schema:
 * its RE2s (which check each pattern compiles on RE2, and run while defaults are checked) are freed
 * after each compile; the RE2s the tool runs are taken from the pattern pool where the source is
 * evaluated.
 */
export function createSchemaCodegen(maxSchemaBytes: number): (schemaText: string, patternBound?: SchemaPatternBound, checkMistakes?: boolean) => SchemaCode {
  // Checks schemas against the meta-schema; compiles nothing else, so it keeps nothing per schema.
  const meta = new Ajv2020(AJV_OPTIONS);
  addFormats(meta);
  addAnnotationFormats(meta);
  return (schemaText, patternBound, checkMistakes = false) => {
    const schema = parseSchemaText(schemaText, maxSchemaBytes);
    // An Ajv per schema: one keeps every schema, validate function and pattern it compiled for
    // ever (in its code scope, which removeSchema leaves). `pattern` and `patternProperties` run on
    // RE2 (linear time), so a schema's regular expression can never take exponential time on
    // hostile arguments (ReDoS). RE2 has no lookaround or backreferences; a schema using them does
    // not compile. loadSchema is deliberately absent: a $ref to anything outside the schema fails.
    const made = new Map<string, RE2>();
    const regExp = Object.assign(
      (pattern: string, flags: string) => {
        const all = flags.includes('u') ? flags : `${flags}u`;
        const key = `${all}/${pattern}`;
        if (!made.has(key) && patternBound && made.size >= patternBound.max) throw new Error(patternBound.refusal);
        const re = made.get(key) ?? new (re2())(pattern, all);
        made.set(key, re);
        return re;
      },
      { code: `require(${JSON.stringify(PATTERN_MODULE)})` },
    );
    // optimize: false halves the compile time (0.4 s, not 0.8, for 64 KiB) for the same code size.
    // addUsedSchema: the schema is known by its base URI, so a `$ref` to its root ("#", or its
    // $id: a tree, a filter of nested nodes) resolves; alone in its Ajv, its $ids clash with none.
    // source: keeps the generated code, made into a module below.
    const ajv = new Ajv2020({ ...AJV_OPTIONS, addUsedSchema: true, validateSchema: false, code: { regExp, optimize: false, source: true } });
    addFormats(ajv);
    addAnnotationFormats(ajv);
    useLinearUrlFormat(ajv);
    const unknownFormats = new Set<string>();
    noteUnknownFormats(ajv, unknownFormats);
    useLinearUniqueItems(ajv);
    useLinearEnum(ajv);
    useOwnDefaults(ajv);
    try {
      meta.validateSchema(schema, true);
      const index = new SchemaIndex(schema);
      const problem = refLoop(index) ?? protoMember(index);
      if (problem) throw new Error(problem);
      const compiled = withOwnDefaults(index);
      const source = standaloneCode(ajv, ajv.compile(compiled));
      // Noted now: refusedDefault compiles subschemas again, under its own key.
      const notes = [...unknownFormats];
      checkSchemaCost(schema, index);
      const refused = refusedDefault(ajv, schema, compiled);
      if (refused) throw new Error(refused);
      const mistake = checkMistakes ? rootObjectProblem(index) ?? keywordTypo(schema) : undefined;
      if (mistake !== undefined) throw new SchemaMistake(mistake);
      return { source, module: wrapSchemaSource(source), unknownFormats: notes };
    } catch (error) {
      throw error instanceof SchemaMistake ? error : new Error(doesNotCompile(error));
    } finally {
      for (const re of made.values()) (re as unknown as { wrapper: { delete(): void } }).wrapper.delete();
    }
  };
}
