/** A connection refused by the destination policy; nothing was sent to the address. */
export class DestinationDeniedError extends Error {
  override readonly name = 'DestinationDeniedError';
  readonly code = 'ERR_DESTINATION_DENIED';
  constructor(
    readonly address: string,
    readonly host: string | undefined,
    readonly rule: string,
  ) {
    super(`${address}${host === undefined ? '' : ` (for ${host})`} is denied by ${rule}`);
  }
}
