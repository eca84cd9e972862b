/** A command line dispatchctl cannot act on: exit 2, with the usage text unless `showUsage` is false. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly showUsage = true,
  ) {
    super(message);
  }
}

/** The largest value of a proto uint32 field. */
export const MAX_UINT32 = 4_294_967_295;

/**
 * A uint32 argument (an offset, a turn number) from the command line or a file: a whole number
 * from 0 to MAX_UINT32, written in decimal digits when it is text. Throws a UsageError naming `what`.
 */
export function uint32Argument(value: unknown, what: string): number {
  const number = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isInteger(number) || number < 0 || number > MAX_UINT32) {
    throw new UsageError(`${what} must be a whole number from 0 to ${MAX_UINT32}, got ${JSON.stringify(value) ?? String(value)}`);
  }
  return number;
}
