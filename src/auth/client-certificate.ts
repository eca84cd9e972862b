import type { ServerSurfaceCall } from '@grpc/grpc-js/build/src/server-call';
import type { MtlsTenantField } from '../config';

const SUBJECT_KEY: Readonly<Record<MtlsTenantField, 'CN' | 'O' | 'OU'>> = { cn: 'CN', o: 'O', ou: 'OU' };

/**
 * The tenant a verified client certificate names in its subject `field`, or undefined when the
 * connection is not mutual TLS, the field is absent, empty or repeated.
 */
export function certificateTenant(call: ServerSurfaceCall, field: MtlsTenantField): string | undefined {
  const context = typeof call.getAuthContext === 'function' ? call.getAuthContext() : undefined;
  const subject = context?.sslPeerCertificate?.subject as Record<string, unknown> | undefined;
  const value = subject?.[SUBJECT_KEY[field]];
  return typeof value === 'string' && value !== '' ? value : undefined;
}
