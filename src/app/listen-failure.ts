/** A port dispatchd was told to listen on could not be bound; says which setting gave it. */
export class ListenFailure extends Error {
  constructor(
    /** The flag that sets the address (`--metrics-listen`). */
    readonly flag: string,
    /** The variable that sets it instead (`DISPATCH_METRICS_LISTEN`). */
    readonly variable: string,
    readonly address: string,
    cause: Error,
  ) {
    super(`${flag} ${address}: ${cause.message}`, { cause });
  }
}

/**
 * Why a port could not be bound, in one line naming the flag or variable to change; `setBy` is the
 * one that gave the address (or `the default`). grpc-js says "No address added out of total 1
 * resolved errors: [listen EADDRINUSE: ...]", Node "listen EADDRINUSE: ...".
 */
export function listenProblem(failure: { flag: string; variable: string; address: string }, setBy: string, error: Error): string {
  const change = `${failure.flag} HOST:PORT or ${failure.variable}`;
  const where = `cannot listen on ${failure.address} (from ${setBy})`;
  if (/EADDRINUSE/.test(error.message)) return `${where}: the address is already in use; stop what holds it, or choose another with ${change}`;
  const cause = /errors: \[(.*)\]$/s.exec(error.message)?.[1] ?? error.message;
  return `${where}: ${cause}; choose another address with ${change}`;
}
