import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { SILENT_LOGGER, type Logger } from '../log';
import { caProblem, identityProblem } from './certificate-check';
import { createLastGoodCertificateProvider, type InitialCertificates } from './last-good-certificates';
import { TlsFileError } from './tls-file-error';
import { resolveTlsRefreshIntervalMs } from './tls-refresh-interval';

export { DEFAULT_TLS_REFRESH_INTERVAL_MS, MAX_TLS_REFRESH_INTERVAL_MS, resolveTlsRefreshIntervalMs } from './tls-refresh-interval';

/** Certificate paths of the gRPC listener, re-read while it serves. */
export interface TlsFiles {
  readonly cert: string;
  readonly key: string;
  /** CA bundle that client certificates must chain to; when set, clients must present one (mutual TLS). */
  readonly ca?: string;
  /** How often the files are re-read for a new certificate, key or CA, in ms. @default DEFAULT_TLS_REFRESH_INTERVAL_MS (60000) */
  readonly refreshIntervalMs?: number;
}

function read(flag: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    throw new TlsFileError(`cannot read ${flag} ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, flag, file);
  }
}

/** Reads the files and checks that they can serve TLS; throws a message naming the flag or file. */
function readChecked(tls: TlsFiles): InitialCertificates {
  const identity = { certificate: read('--tls-cert', tls.cert), privateKey: read('--tls-key', tls.key) };
  const identityError = identityProblem(identity.certificate, identity.privateKey, tls);
  if (identityError !== undefined) throw new TlsFileError(identityError);
  if (tls.ca === undefined) return { identity };
  const caCertificate = read('--tls-ca', tls.ca);
  const caError = caProblem(caCertificate, tls.ca);
  if (caError !== undefined) throw new TlsFileError(caError, '--tls-ca', tls.ca);
  return { identity, ca: { caCertificate } };
}

/**
 * Server credentials for TLS, or mutual TLS when a CA is given. The files are read and checked
 * now (a missing or unusable one throws, naming it), then re-read every `refreshIntervalMs` by
 * grpc-js's FileWatcherCertificateProvider while the server listens: new handshakes get a changed
 * certificate, key or CA, connections already open keep theirs, and an unusable change is refused
 * with one warning while the last good certificates stay in force.
 */
export function serverCredentials(tls: TlsFiles, logger: Logger = SILENT_LOGGER): grpc.ServerCredentials {
  const refreshIntervalMs = resolveTlsRefreshIntervalMs(tls.refreshIntervalMs);
  const initial = readChecked(tls);
  const files = new grpc.experimental.FileWatcherCertificateProvider({ certificateFile: tls.cert, privateKeyFile: tls.key, caCertificateFile: tls.ca, refreshIntervalMs });
  const provider = createLastGoodCertificateProvider(files, initial, tls, logger);
  // grpc-js 1.14 names the first parameter the CA provider, but serves it as the identity and the
  // second, nullable one as the CA; one provider in both places does not depend on the names.
  return grpc.experimental.createCertificateProviderServerCredentials(provider, initial.ca ? provider : null, initial.ca !== undefined);
}
