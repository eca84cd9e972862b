import type { ValidateFunction } from 'ajv';
import { Script, runInThisContext } from 'node:vm';
import { ENUM_MODULE, inEnum } from './linear-enum';
import { fillOwnDefaults, OWN_DEFAULTS_MODULE } from './own-defaults';
import { PATTERN_MODULE } from './schema-codegen';
import { appendErrors, boundedValidate, lookAtClock, pushError, TICKS_PER_LOOK } from './schema-errors';
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
 * Evaluates the source of a validate function (Ajv's standalone code, see schema-codegen.ts) in
 * this thread. Its patterns are made by `pattern` (in the main thread, the pattern pool: each RE2
 * leased for the tool's owner), our keywords' functions are this thread's; anything else it
 * requires is Ajv's runtime, or refused. `cachedData` is V8's code cache of the same source made by
 * the compiling thread: with it nothing is parsed or compiled here (a 256 KiB schema's 5 MB of
 * source took 200-300 ms to parse, and its first call as long to compile; with it, ~30 ms).
 */
export function loadSchemaModule(source: string, pattern: PatternMaker, cachedData?: Uint8Array): SchemaModule {
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
  const code = wrapped(source);
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

/** What the wrapped source requires for the functions of schema-errors.ts. */
const ERRORS_MODULE = 'dispatch:schema-errors';

/**
 * Each place Ajv's code takes a called function's errors, `X` that function: written as a call of
 * `appendErrors` (see schema-errors.ts). A schema's own text that spells the same (a description)
 * is changed inside its string literal, but stays text: the call has no quotes.
 */
const CONCAT_ERRORS = /vErrors = vErrors === null \? ([\w.$]+)\.errors : vErrors\.concat\(\1\.errors\);/g;
/** Each place Ajv's code adds an error to a list it has: written as a call of `pushError` (the same). */
const PUSH_ERROR = /vErrors\.push\((err\d*)\);/g;
/**
 * The heads of Ajv's loops over the arguments (an array's items, an object's own keys) and of its
 * validate functions: each counts a tick down as its body's first statement (see `lookAtClock` in
 * schema-errors.ts), in a variable of the module's (a property of a shared object cost 5 ns a tick,
 * 1.5x the time of an array of small objects). A loop passes its function's errors so far, to be
 * kept if checking stops; a function has none yet.
 */
const LOOP_HEAD = /for\(let (i\d+)=0; \1<len\d+; \1\+\+\)\{|for\(const key\d+ of Object\.keys\([\w$.]+\)\)\{/g;
const FUNCTION_HEAD = /function validate\d+\(data, \{instancePath="", parentData, parentDataProperty, rootData=data(?:, dynamicAnchors=\{\})?\}=\{\}\)\{/g;
const tick = (errors: string) => `if(--dispatchTicks<0){dispatchTicks=${TICKS_PER_LOOK};dispatchErrors.lookAtClock(${errors});}`;

/**
 * The source as a function of (require, module, exports), its error lists bounded and appended in
 * place (see schema-errors.ts). Ajv writes the schema's objects as object literals (JSON, no spaces),
 * where a "__proto__" key sets the prototype (a property named so, or its default, was lost): a
 * computed key makes it a property. A key follows `{` or `,`; inside a string literal the quote
 * before `__proto__` is escaped (a property named `a"__proto__` is `"a\\"__proto__":`), so the
 * look-behind matches keys only. The function is strict, as Ajv's code (its own "use strict" is no
 * longer first).
 */
const wrapped = (source: string) =>
  `(function (require, module, exports) {"use strict";const dispatchErrors = require('${ERRORS_MODULE}');let dispatchTicks = ${TICKS_PER_LOOK};${source
    .replace(/(?<=[{,])"__proto__":/g, '["__proto__"]:')
    .replace(CONCAT_ERRORS, 'vErrors = dispatchErrors.appendErrors(vErrors, $1.errors);')
    .replace(PUSH_ERROR, 'dispatchErrors.pushError(vErrors, $1);')
    .replace(LOOP_HEAD, `$&${tick('vErrors')}`)
    .replace(FUNCTION_HEAD, `$&${tick('null')}`)}\n})`;
