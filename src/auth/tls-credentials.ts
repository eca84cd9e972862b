import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';

/** Certificate paths of the gRPC listener. */
export interface TlsFiles {
  readonly cert: string;
  readonly key: string;
  /** CA bundle that client certificates must chain to; when set, clients must present one (mutual TLS). */
  readonly ca?: string;
}

function read(flag: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    throw new Error(`cannot read ${flag} ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
}

/** Server credentials for TLS, or mutual TLS when a CA is given. */
export function serverCredentials(tls: TlsFiles): grpc.ServerCredentials {
  const ca = tls.ca === undefined ? null : read('--tls-ca', tls.ca);
  return grpc.ServerCredentials.createSsl(ca, [{ cert_chain: read('--tls-cert', tls.cert), private_key: read('--tls-key', tls.key) }], ca !== null);
}
