import { hash } from 'node:crypto';
import { canonicalJson, readPointer } from '../json';
import { localSessionKey } from './local-session-key';
import type { SessionScope } from './store';

/**
 * The idempotency key of a call: a hash of tenant, session, tool and the canonical JSON of the
 * key fields (all arguments when none are named; pass `canonicalArgs` when already computed). The
 * tool_call_id is never part of it.
 */
export function idempotencyKey(scope: SessionScope, tool: string, args: unknown, keyFields: readonly string[], canonicalArgs?: string): string {
  return hashKeyMaterial(keyMaterial(scope, tool, args, keyFields, canonicalArgs));
}

/** The idempotency key of a key material (see {@link keyMaterial}). */
export const hashKeyMaterial = (material: string): string => hash('sha256', material, 'base64url');

/**
 * What an idempotency key hashes: tenant, session, tool and the canonical key fields, NUL-separated.
 * A call leaving a key field out is keyed by all its arguments: read as null, two emails to one
 * address without a subject shared a key, and the second body was answered by the first's replay.
 */
export function keyMaterial(scope: SessionScope, tool: string, args: unknown, keyFields: readonly string[], canonicalArgs?: string): string {
  const fields = keyFields.length === 0 ? undefined : keyFields.map((pointer) => readPointer(args, pointer));
  const material = fields === undefined || fields.includes(undefined) ? (canonicalArgs ?? canonicalJson(args)) : canonicalJson(fields);
  return `${localSessionKey(scope)}\u0000${tool}\u0000${material}`;
}
