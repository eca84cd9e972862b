/** The spellings of on and off a boolean environment variable takes, in any case. */
const TRUE = ['1', 'true', 'yes', 'on'];
const FALSE = ['0', 'false', 'no', 'off'];

/**
 * A boolean environment variable: undefined when unset or empty (as every variable of dispatchd),
 * else true or false by its usual spellings. Anything else throws, naming the variable: only "1"
 * used to turn DISPATCH_INSECURE on, and "true" was silently off.
 */
export function booleanEnv(env: NodeJS.ProcessEnv, name: string): boolean | undefined {
  const value = env[name];
  if (value === undefined || value === '') return undefined;
  const lower = value.toLowerCase();
  if (TRUE.includes(lower)) return true;
  if (FALSE.includes(lower)) return false;
  throw new Error(`${name} must be one of ${TRUE.join(', ')} (on) or ${FALSE.join(', ')} (off), in any case, got ${JSON.stringify(value)}`);
}
