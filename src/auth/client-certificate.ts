import type { ServerSurfaceCall } from '@grpc/grpc-js/build/src/server-call';
import type { MtlsTenantField } from '../config';
import { terminalText } from '../events/terminal-text';
import { tenantProblem } from '../parse/client-id';
import { shortened } from '../pipeline/bound-result';

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

/**
 * The message refusing a certificate whose subject `field` names `tenant`, when the name breaks
 * the rule of client ids (src/parse/client-id.ts), else undefined. A CA may sign any subject, and
 * a tenant reaches logs, events, dispatchctl lines and Redis keys; the name is echoed as other
 * ids are, cut and escaped (`\u202e`).
 */
export function certificateTenantRefusal(tenant: string, field: MtlsTenantField): string | undefined {
  const problem = tenantProblem(tenant);
  if (problem === undefined) return undefined;
  const key = SUBJECT_KEY[field];
  return `the client certificate's ${key} "${terminalText(shortened(tenant, 100))}" ${problem}; present a certificate whose ${key} is a plain tenant name`;
}
