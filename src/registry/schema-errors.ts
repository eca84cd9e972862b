import type { ErrorObject, ValidateFunction } from 'ajv';
import { ALLOWANCE_SPENT, chargeCheck, checkAllowance } from './check-time';

/**
 * The error lists of a compiled schema's validate function (Ajv's standalone code, rewritten by
 * schema-module.ts), bounded. Ajv's code (allErrors) keeps every error it finds, each with its
 * path strings and references to the schema and the data, until the call ends: one call's
 * arguments could fill the heap (an array of 300,000 `{}` against `items: {anyOf: [50 variants]}`,
 * 900 KB, under max_argument_bytes, ran the server out of memory; 30,000 took 666 MB and 6.3 s).
 * Here a list keeps its first {@link KEPT_ERRORS} errors whole and only counts the others (a
 * placeholder in their place: Ajv's code relies on a list's length being its count of errors, and
 * cuts the list back to a count when an anyOf branch passes); past {@link MAX_SCHEMA_ERRORS} the
 * call stops and fails (see {@link boundedValidate}). So does a call past {@link MAX_CHECK_MS}:
 * a schema may apply thousands of subschemas to each value (an allOf of 9,000 `maxLength` under
 * `items`: 10,000 one-letter items, 40 KB, took 6.6 s of the event loop every tenant shares, and
 * 1 MiB of them would take minutes), which no bound on the schema alone or the arguments alone
 * prevents.
 */

/** Errors a list keeps whole: the model reads 5, the pipeline's other checks the first. */
export const KEPT_ERRORS = 100;
/**
 * Errors in one list at which checking stops. Valid arguments can make as many on the way (each
 * item of a long array failing an anyOf's first branch and passing its second): this is far past
 * what a tool's arguments make, and a list this long is 8 MB of references.
 */
export const MAX_SCHEMA_ERRORS = 1_000_000;
/** The longest one call's arguments are checked, in ms; past it the call fails (see {@link lookAtClock}). */
export const MAX_CHECK_MS = 1_000;
/** The keyword of the error that says checking stopped (see validation-message.ts). */
export const STOPPED_KEYWORD = 'checkingStopped';

const ignored = { get: () => undefined, set: () => undefined, enumerable: true };
/**
 * What stands for an error not kept. Ajv's code may write to an error already listed (a keyword's
 * own errors get their paths, schema and data): here such writes are dropped, so it holds nothing.
 */
const NOT_KEPT = Object.freeze(
  Object.create(Object.prototype, {
    keyword: { value: 'notKept', enumerable: true },
    params: { value: Object.freeze({}), enumerable: true },
    message: { value: 'not kept', enumerable: true },
    instancePath: ignored,
    schemaPath: ignored,
    schema: ignored,
    parentSchema: ignored,
    data: ignored,
  }) as ErrorObject,
);

/** Thrown where checking stops: why, and the first errors found, if known. */
class CheckingStopped extends Error {
  constructor(
    message: string,
    readonly kept: readonly ErrorObject[],
    /** Stopped sooner than MAX_CHECK_MS, its tenant's allowance spent (check-time.ts). */
    readonly allowance = false,
  ) {
    super(message);
  }
}

const tooMany = (list: readonly ErrorObject[]) => new CheckingStopped(`checking stopped at ${MAX_SCHEMA_ERRORS} errors`, list.slice(0, KEPT_ERRORS));

/**
 * Turns of Ajv's loops over the arguments (an array's items, an object's keys) and calls of its
 * validate functions (a `$ref`) between two looks at the clock: the rewritten code counts them
 * down in a variable of its own and calls {@link lookAtClock} at zero.
 */
export const TICKS_PER_LOOK = 64;
/** When the call being checked stops: 0 until its first look at the clock. */
let deadline = 0;
/** When the call being checked first looked at the clock, and how long it may take from then. */
let firstLook = 0;
let allowed = MAX_CHECK_MS;

/**
 * Stops the call being checked past {@link MAX_CHECK_MS} since its first look (small arguments
 * never look), or sooner, past what is left of its tenant's allowance (check-time.ts), keeping the
 * first of `errors`, the errors found so far by the function looking.
 */
export function lookAtClock(errors: readonly ErrorObject[] | null): void {
  const now = performance.now();
  if (deadline === 0) {
    firstLook = now;
    allowed = Math.min(MAX_CHECK_MS, checkAllowance(now));
    deadline = now + allowed;
  }
  // At the first look too, when the allowance is spent: the next look is another 64 ticks away.
  if (now > deadline || allowed <= 0) {
    const spent = allowed < MAX_CHECK_MS;
    throw new CheckingStopped(`checking stopped after ${Math.round(allowed)} ms: the arguments are too costly to check against the tool's schema${spent ? `; ${ALLOWANCE_SPENT}` : ''}`, errors?.slice(0, KEPT_ERRORS) ?? [], spent);
  }
}

/** `error` added to `list` (Ajv's `vErrors.push(err)`). */
export function pushError(list: ErrorObject[], error: ErrorObject): void {
  if (list.length >= MAX_SCHEMA_ERRORS) throw tooMany(list);
  list.push(list.length < KEPT_ERRORS ? error : NOT_KEPT);
}

/**
 * `more` (a called validate function's errors) added to `into` (the caller's), in place. Ajv's
 * code copied both into a new list at each call of a function that failed (`vErrors.concat`), so
 * a recursive schema's errors cost their square: a tree of 30,000 children each missing a required
 * field (90 KB of arguments) took 19 s. In place is what Ajv does with its own errors (`push`):
 * the callee's list is never read again once its caller took it.
 */
export function appendErrors(into: ErrorObject[] | null, more: ErrorObject[] | null): ErrorObject[] | null {
  if (into === null || more === null) return into ?? more;
  if (into.length + more.length > MAX_SCHEMA_ERRORS) throw tooMany(into.length > 0 ? into : more);
  for (const error of more) into.push(into.length < KEPT_ERRORS ? error : NOT_KEPT);
  return into;
}

/** The error ending a list whose checking stopped. */
const stopped = (message: string, allowance: boolean): ErrorObject => ({ instancePath: '', schemaPath: '#', keyword: STOPPED_KEYWORD, params: allowance ? { allowance } : {}, message });

/** Whether `errors` end with checking stopped for the tenant's allowance (not the arguments' own cost): the same call may pass later. */
export const allowanceStopped = (errors: readonly ErrorObject[]): boolean => {
  const last = errors.at(-1);
  return last?.keyword === STOPPED_KEYWORD && (last.params as { allowance?: boolean }).allowance === true;
};

/** The bounded validate functions whose checking has stopped for its time: their schemas can take long to check. */
const costly = new WeakSet<ValidateFunction>();

/**
 * Whether checking against `validate` has stopped for its time since it was compiled: a tenant
 * whose allowance is spent is refused such a tool's calls before any check (prepareArguments),
 * as each check stopped at its first look still took 64 ticks, and a tick of such a schema may
 * be thousands of subschemas (an allOf of 9,000 under items: ~50 ms a call, 128 calls a turn).
 */
export const checkedCostly = (validate: ValidateFunction): boolean => costly.has(validate);

/**
 * `validate` that fails where its lists outgrew {@link MAX_SCHEMA_ERRORS} or its time
 * {@link MAX_CHECK_MS}, its errors then the first ones found, if any, and one more saying checking
 * stopped and why. What else it throws, it throws.
 */
export function boundedValidate(validate: ValidateFunction): ValidateFunction {
  const bounded = ((data: unknown) => {
    deadline = 0;
    try {
      const valid = validate(data) as boolean;
      bounded.errors = validate.errors;
      return valid;
    } catch (error) {
      if (!(error instanceof CheckingStopped)) throw error;
      // Its own cost, not a spent allowance's stop (which a tool of any schema may meet).
      if (deadline !== 0 && !error.allowance) costly.add(bounded);
      bounded.errors = [...error.kept, stopped(error.message, error.allowance)];
      return false;
    } finally {
      // Only a check that looked at the clock is charged: the others took microseconds.
      if (deadline !== 0) {
        const now = performance.now();
        chargeCheck(now - firstLook, now);
      }
    }
  }) as ValidateFunction;
  return Object.assign(bounded, { schema: validate.schema, schemaEnv: validate.schemaEnv, evaluated: validate.evaluated, source: validate.source });
}
