import type { ValidateFunction } from 'ajv';
import { Script, runInThisContext } from 'node:vm';
import { ENUM_MODULE, inEnum } from './linear-enum';
import { fillOwnDefaults, OWN_DEFAULTS_MODULE } from './own-defaults';
import { PATTERN_MODULE } from './schema-codegen';
import { appendErrors, boundedValidate, lookAtClock, pushError } from './schema-errors';
import { ERRORS_MODULE } from './schema-rewrite';
import { uniqueIndexes, UNIQUE_ITEMS_MODULE } from './unique-items';

/** Modules of Ajv's and ajv-formats' runtime the generated code may require (equal, ucs2length, uri, the formats...). */
const RUNTIME = /^(ajv\/dist\/runtime\/[a-z0-9_]+|ajv-formats\/dist\/formats)$/;

/** Makes the RE2 (or anything with `test`) of a pattern with its flags. */
export type PatternMaker = (source: string, flags: string) => unknown;

/** A schema's validate function, loaded, and its script (whose compiled code can be cached). */
export interface SchemaModule {
  readonly validate: ValidateFunction;
  /** Absent where no cache can be used (see SAME_REALM). */
  readonly script?: Script;
}

/**
 * Evaluates `code`, a validate function's module as the compiling thread made it (Ajv's standalone
 * code rewritten: `SchemaCode.module`, see schema-codegen.ts and schema-rewrite.ts), in this thread. Its patterns are made by `pattern` (in the main thread, the pattern pool: each RE2
 * leased for the tool's owner), our keywords' functions are this thread's; anything else it
 * requires is Ajv's runtime, or refused. `cachedData` is V8's code cache of the same source made by
 * the compiling thread: with it nothing is parsed or compiled here (a 256 KiB schema's 5 MB of
 * source took 200-300 ms to parse, and its first call as long to compile; with it, ~30 ms).
 * The rewriting is the compiling thread's too: ~300 ms of a 9 MB source.
 */
export function loadSchemaModule(code: string, pattern: PatternMaker, cachedData?: Uint8Array): SchemaModule {
  const own: Record<string, unknown> = {
    [PATTERN_MODULE]: pattern,
    [ERRORS_MODULE]: { appendErrors, pushError, lookAtClock },
    [OWN_DEFAULTS_MODULE]: { fillOwnDefaults },
    [UNIQUE_ITEMS_MODULE]: { uniqueIndexes },
    [ENUM_MODULE]: { inEnum },
  };
  const load = (name: string): unknown => {
    if (Object.hasOwn(own, name)) return own[name];
    if (RUNTIME.test(name)) return require(name) as unknown;
    throw new Error(`a compiled schema required "${name}", which it may not`);
  };
  const script = SAME_REALM ? new Script(code, { filename: 'dispatch-schema.js', cachedData: cachedData && Buffer.from(cachedData.buffer, cachedData.byteOffset, cachedData.byteLength) }) : undefined;
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- the code is Ajv's, made from a checked schema
  const run = (script?.runInThisContext() ?? new Function(`return ${code}`)()) as (require: unknown, module: unknown, exports: unknown) => void;
  const module = { exports: {} as unknown };
  run(load, module, module.exports);
  return { validate: boundedValidate(module.exports as ValidateFunction), script };
}

/**
 * Whether this module runs in Node's main context. Under jest it runs in a context of its own,
 * where the code must run too (Ajv's `equal` compares constructors: the test's objects are its
 * context's); there, no cache is used.
 */
const SAME_REALM = runInThisContext('Object') === Object;

