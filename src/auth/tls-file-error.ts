/**
 * A TLS certificate, key or CA file the listener cannot use: unreadable, or refused once read.
 * Apart from tls-credentials (which loads grpc-js), so that dispatchd can tell it without it.
 */
export class TlsFileError extends Error {
  override readonly name = 'TlsFileError';
  constructor(
    message: string,
    /** The flag that gives the file (`--tls-ca`), when one file is at fault. */
    readonly flag?: string,
    readonly file?: string,
  ) {
    super(message);
  }
}
