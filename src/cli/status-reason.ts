import * as grpc from '@grpc/grpc-js';
import { errorReason } from '../client';

/**
 * ` (reason LOOP_DETECTED)` after a failed RPC's message, to branch on; '' without a reason, or
 * when it only repeats the code's name (NOT_FOUND). Only an upper-case word is printed: a server
 * or a proxy wrote it.
 */
export function reasonNote(error: grpc.ServiceError): string {
  const reason = errorReason(error);
  return /^[A-Z][A-Z0-9_]{0,63}$/.test(reason) && reason !== grpc.status[error.code] ? ` (reason ${reason})` : '';
}

/**
 * A failed RPC's details as dispatchctl shows them: grpc-js ends a failed connection's with
 * `. Resolution note: ` and what name resolution said, often nothing; that empty note is cut
 * (`--tls` at a plaintext server showed `... wrong version number ... . Resolution note:`).
 */
export function statusDetails(details: string | undefined): string {
  return (details ?? '').replace(/\s*\.?\s*Resolution note:\s*$/, '').trimEnd();
}
