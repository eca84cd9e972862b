import { DispatchError, errors } from '../errors';
import { jsonDepth } from '../json';
import type { Limits } from '../options';
import { shortened } from '../pipeline/bound-result';
import { ALLOWANCE_SPENT, allowanceSpent, chargeChecksTo, untilRefilled, type ResolvedTool } from '../registry';
import { allowanceStopped, checkedCostly } from '../registry/schema-errors';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { inexactNumber, inexactNumberProblem } from './exact-numbers';
import { watchDefaults } from './defaults-to-apply';
import { repairArguments } from './repair';
import { tolerantArguments } from './tolerant-arguments';
import { formatValidationErrors } from './validation-message';

/** Arguments ready for a tool, with a line for each repair made. */
export interface PreparedArguments {
  readonly args: unknown;
  readonly warnings: readonly string[];
}

type ArgumentLimits = Pick<Limits, 'maxArgumentBytes' | 'maxArgumentDepth'>;

/** Arguments text parsed already: `value` is what JSON.parse made of it, untouched since. */
export interface ParsedText {
  readonly value: unknown;
}

/**
 * Why arguments `text` is refused before it is parsed: over max_argument_bytes, or nested past
 * max_argument_depth (parsing and canonicalising such text overflowed the stack); else undefined.
 */
export function unparsedRefusal(text: string, limits: ArgumentLimits): { readonly problem: string; readonly suggestion?: string } | undefined {
  // A UTF-16 code unit is at most 3 UTF-8 bytes: most texts are measured without encoding them.
  if (text.length * 3 > limits.maxArgumentBytes && Buffer.byteLength(text) > limits.maxArgumentBytes) {
    return { problem: `arguments are ${Buffer.byteLength(text)} bytes, over the limit of ${limits.maxArgumentBytes}`, suggestion: 'Send smaller arguments, for example by splitting the work into several calls.' };
  }
  // Nesting needs a bracket per level, so a text shorter than the limit cannot exceed it.
  if (text.length > limits.maxArgumentDepth && jsonDepth(text) > limits.maxArgumentDepth) return { problem: `arguments nest deeper than ${limits.maxArgumentDepth} levels` };
  return undefined;
}

/**
 * Parses a call's JSON arguments, repairs them when the tool is lenient, and validates them
 * against the tool's schema (missing optionals take their defaults, which a lenient tool's
 * warnings name: see watchDefaults). Throws INVALID_ARGUMENTS naming the path, the value passed
 * and what the schema expects; the tool is never executed then.
 * `parsed`, when given, is `text` as JSON.parse read it (a parallel turn's planner did): it is
 * taken instead of parsing again, after the same checks of the text. The checks' time is charged
 * to `tenant`'s allowance (check-time.ts).
 */
export function prepareArguments(tool: ResolvedTool, text: string, limits: ArgumentLimits, parsed?: ParsedText, tenant = ''): PreparedArguments {
  const notRun = 'the tool was not executed';
  const refusal = unparsedRefusal(text, limits);
  if (refusal) throw errors.invalidArguments(`${refusal.problem}; ${notRun}`, refusal.suggestion);
  refuseInexact(text);
  let args: unknown;
  let syntax: string | undefined;
  try {
    args = parsed !== undefined ? parsed.value : text.trim() === '' ? {} : JSON.parse(text);
  } catch (error) {
    const tooLong = text.length > MAX_SYNTAX_REPAIR_CHARS;
    const tolerant = tool.spec.lenientArguments && !tooLong ? tolerantArguments(text) : undefined;
    const unrepaired = tool.spec.lenientArguments && tooLong ? `; past ${MAX_SYNTAX_REPAIR_CHARS} characters their syntax is not repaired` : '';
    if (tolerant === undefined) throw errors.invalidArguments(`arguments are not valid JSON (${(error as Error).message})${unrepaired}; ${notRun}`, 'Send the arguments as one JSON object, with double-quoted keys and strings.');
    // Its numbers were read as written (single-quoted text is no string to the check above).
    refuseInexact(tolerant.json);
    args = JSON.parse(tolerant.json);
    syntax = tolerant.warning;
  }
  const defaults = tool.spec.lenientArguments ? watchDefaults(args, tool.schema) : undefined;
  chargeChecksTo(tenant);
  if (allowanceSpent(tenant) && checkedCostly(tool.validate)) throw checkingPaused(tenant);
  if (tool.validate(args)) return withSyntax(syntax, { args, warnings: defaults?.filled() ?? [] });
  const problems = tool.validate.errors ?? [];
  if (allowanceStopped(problems)) throw checkingPaused(tenant);
  let refused = '';
  let suggestion: string | undefined;
  if (defaults !== undefined) {
    // Repaired from the arguments as sent: the refused validation filled the defaults of the
    // `then` or `else` the value took, which the repaired value may not take.
    const sent = defaults.filled();
    defaults.undo();
    const repaired = repairArguments(args, tool.schema, { maxDepth: limits.maxArgumentDepth, sideEffects: !tool.readOnly });
    if (repaired.repairs.length > 0) {
      const watch = watchDefaults(repaired.value, tool.schema);
      if (tool.validate(repaired.value)) {
        // Those the call as sent took too come first; a dropped null or a decoded object adds others.
        const applied = new Set(watch.filled());
        return withSyntax(syntax, { args: repaired.value, warnings: [...repaired.repairs, ...new Set([...sent.filter((line) => applied.has(line)), ...applied])] });
      }
    }
    // Paths are the model's own keys: each line is cut, as the validation lines are.
    refused = repaired.refused.slice(0, 3).map((line) => `; ${shortened(line, 400)}`).join('');
    // A "did you mean" is the next step; the values are the schema's, the path the model's own.
    if (repaired.suggestion !== undefined) suggestion = shortened(repaired.suggestion, 400);
  }
  throw errors.invalidArguments(`${formatValidationErrors(problems, 5, tool.schema)}${refused}; ${notRun}`, suggestion);
}

/**
 * Checking a call's arguments stopped because its tenant's calls took their allowance of checking
 * time (check-time.ts): not the arguments' fault, nor the tool's; the same call passes once the
 * allowance is back. UNAVAILABLE before, recoverable, not within the turn.
 */
function checkingPaused(tenant: string): DispatchError {
  const retryAfterMs = untilRefilled(tenant, performance.now());
  return new DispatchError(ErrorKind.UNAVAILABLE, `dispatch did not finish checking the arguments against the tool's schema: ${ALLOWANCE_SPENT}; the tool was not executed`, {
    phase: 'before',
    recoverable: true,
    retryAfterMs,
    notRetriedWithinTurn: true,
    notTheTool: true,
    suggestion: `Try again in ${Math.ceil(retryAfterMs / 1000)} seconds, or send smaller arguments.`,
  });
}

/**
 * The longest arguments text whose syntax a lenient tool's call has repaired: reading past JSON
 * took ~0.7 ms per KB of the event loop every tenant shares (a security probe: 655 ms for 960 KB).
 */
export const MAX_SYNTAX_REPAIR_CHARS = 65_536;

/** Refuses JSON `text` holding a number JSON.parse would change (see exact-numbers). */
function refuseInexact(text: string): void {
  const inexact = inexactNumber(text);
  if (inexact !== undefined) throw errors.invalidArguments(`${inexactNumberProblem(inexact)}; the tool was not executed`, 'Send such a number as a string, or use a smaller one.');
}

/** Adds a repair of the arguments' syntax, when one was made, before the other repairs. */
const withSyntax = (syntax: string | undefined, result: PreparedArguments): PreparedArguments => (syntax === undefined ? result : { args: result.args, warnings: [syntax, ...result.warnings] });
