import { createHash } from 'node:crypto';
import { canonicalJson, readPointer } from '../json';
import type { SessionScope } from './store';

/**
 * The idempotency key of a call: a hash of tenant, session, tool and the canonical JSON of the
 * key fields (all arguments when none are named). The tool_call_id is never part of it.
 */
export function idempotencyKey(scope: SessionScope, tool: string, args: unknown, keyFields: readonly string[]): string {
  const material = keyFields.length === 0 ? args : keyFields.map((pointer) => readPointer(args, pointer) ?? null);
  return createHash('sha256')
    .update(scope.tenant)
    .update('\u0000')
    .update(scope.sessionId)
    .update('\u0000')
    .update(tool)
    .update('\u0000')
    .update(canonicalJson(material))
    .digest('base64url');
}
