import { TICKS_PER_LOOK } from './schema-errors';

/** What the wrapped source requires for the functions of schema-errors.ts. */
export const ERRORS_MODULE = 'dispatch:schema-errors';

/** A rewrite of Ajv's code: what it matches, and what it writes in its place. */
interface Rewrite {
  readonly match: RegExp;
  readonly to: (match: string, groups: Record<string, string>) => string;
}

const tick = (errors: string) => `if(--dispatchTicks<0){dispatchTicks=${TICKS_PER_LOOK};dispatchErrors.lookAtClock(${errors});}`;

/**
 * Ajv writes the schema's objects as object literals (JSON, no spaces), where a "__proto__" key
 * sets the prototype (a property named so, or its default, was lost): a computed key makes it a
 * property. A key follows `{` or `,`.
 */
const PROTO_KEY: Rewrite = { match: /[{,]"__proto__":/, to: (key) => `${key[0]!}["__proto__"]:` };
/**
 * Each place Ajv's code takes a called function's errors, `callee` that function: written as a
 * call of `appendErrors` (see schema-errors.ts).
 */
const CONCAT_ERRORS: Rewrite = {
  match: /vErrors = vErrors === null \? (?<callee>[\w.$]+)\.errors : vErrors\.concat\(\k<callee>\.errors\);/,
  to: (_, { callee }) => `vErrors = dispatchErrors.appendErrors(vErrors, ${callee}.errors);`,
};
/** Each place Ajv's code adds an error to a list it has: written as a call of `pushError` (the same). */
const PUSH_ERROR: Rewrite = { match: /vErrors\.push\((?<err>err\d*)\);/, to: (_, { err }) => `dispatchErrors.pushError(vErrors, ${err});` };
/**
 * The heads of Ajv's loops over the arguments (an array's items, an object's own keys) and of its
 * validate functions: each counts a tick down as its body's first statement (see `lookAtClock` in
 * schema-errors.ts), in a variable of the module's (a property of a shared object cost 5 ns a tick,
 * 1.5x the time of an array of small objects). A loop passes its function's errors so far, to be
 * kept if checking stops; a function has none yet.
 */
const LOOP_HEAD: Rewrite = {
  match: /for\(let (?<i>i\d+)=0; \k<i><len\d+; \k<i>\+\+\)\{|for\(const key\d+ of Object\.keys\([\w$.]+\)\)\{/,
  to: (head) => `${head}${tick('vErrors')}`,
};
const FUNCTION_HEAD: Rewrite = {
  match: /function validate\d+\(data, \{instancePath="", parentData, parentDataProperty, rootData=data(?:, dynamicAnchors=\{\})?\}=\{\}\)\{/,
  to: (head) => `${head}${tick('null')}`,
};
const REWRITES = [PROTO_KEY, CONCAT_ERRORS, PUSH_ERROR, LOOP_HEAD, FUNCTION_HEAD];
/**
 * What no rewrite may look inside: Ajv's string literals (JSON, in double quotes), which hold the
 * schema's own text (a const, an enum, a default, a property name, a pattern, a description: a
 * `const: "vErrors.push(err0);"` was checked as "dispatchErrors.pushError(vErrors, err0);", and a
 * property named as a loop head was never checked), and its regular expression literals (formats,
 * after `= `; some hold a `"`). Matched in the same scan, a literal is taken whole and kept as is.
 * Every alternative of the scan starts with a character of its own and no look-behind, so V8 skips
 * the rest of the text quickly: with look-behinds the scan of a 9 MB source took 600-800 ms of the
 * event loop, against 70 ms for the separate rewrites before.
 */
const LITERAL = /"(?:[^"\\\n]|\\.)*"|= \/(?:[^/\\[\n]|\\.|\[(?:[^\]\\\n]|\\.)*\])+\/[a-z]*/;
const ANY = new RegExp([...REWRITES.map(({ match }, n) => `(?<r${n}>${match.source})`), LITERAL.source].join('|'), 'g');

/**
 * The source as a function of (require, module, exports), its error lists bounded and appended in
 * place and its loops counted (see schema-errors.ts), in one scan that skips literals. The function
 * is strict, as Ajv's code (its own "use strict" is no longer first).
 */
export const wrapSchemaSource = (source: string): string =>
  `(function (require, module, exports) {"use strict";const dispatchErrors = require('${ERRORS_MODULE}');let dispatchTicks = ${TICKS_PER_LOOK};${source.replace(ANY, (match: string, ...rest: unknown[]) => {
    const groups = rest.at(-1) as Record<string, string>;
    const rewrite = REWRITES.find((_, n) => groups[`r${n}`] !== undefined);
    return rewrite ? rewrite.to(match, groups) : match;
  })}\n})`;
