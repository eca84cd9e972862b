import { rememberRecentTexts } from '../remember';
import type { SessionScope } from '../store';

/** The Redis keys of one session; all share the hash tag `{tenant:session}`, hence one cluster slot. */
export interface SessionKeys {
  /** The loop window: a list, newest first, capped at the window size. */
  readonly window: string;
  /** Trajectory memory: a list, oldest first, each entry prefixed by its expiry time. */
  readonly memory: string;
  /** Names of the session's idempotency records, scored by their expiry time (for EndSession). */
  readonly recordIndex: string;
  /** Names of the session's spilled results, scored by their expiry time (for EndSession and the cap). */
  readonly resultIndex: string;
  /** Calls counted per budget (`budget:` policies): a hash of budget id -> count. */
  readonly budgets: string;
  /** The session's end mark: when EndSession last ended it (Redis's TIME in µs), see end-session.lua and finish-attempt.lua. */
  readonly ended: string;
  /** The mark of a call's token counted against a budget (begin-attempt.lua; give-back-budget.lua gives its count back): lives the call's lease, not the counts'. */
  budgetMark(budgetId: string, token: string): string;
  /** The probe of a loop block of an op (its id, see opId): who runs once more after the cool-down (begin-attempt.lua). */
  probe(opId: string): string;
  record(idempotencyKey: string): string;
  result(handle: string): string;
}

/** base64url of a tenant or session name; remembered, as a session's calls name it again and again. */
const encode = rememberRecentTexts((text: string) => Buffer.from(text, 'utf8').toString('base64url'));

/**
 * Keys of a session: `dispatch:{<tenant>:<session>}:...` with tenant and session base64url-encoded,
 * so no `{`, `}` or `:` inside them can break the hash tag or collide with another scope.
 */
export function sessionKeys(scope: SessionScope, prefix = 'dispatch'): SessionKeys {
  const base = `${prefix}:{${encode(scope.tenant)}:${encode(scope.sessionId)}}:`;
  return {
    window: `${base}window`,
    memory: `${base}memory`,
    recordIndex: `${base}records`,
    resultIndex: `${base}results`,
    budgets: `${base}budgets`,
    ended: `${base}ended`,
    budgetMark: (budgetId, token) => `${base}budget-mark:${encode(budgetId)}:${token}`,
    probe: (opId) => `${base}probe:${opId}`,
    record: (key) => `${base}idem:${key}`,
    result: (handle) => `${base}result:${handle}`,
  };
}

/**
 * `text` as the hash tag of a key: `{text}`, with `%`, `{` and `}` percent-encoded, so a name that
 * holds braces (a tenant named by a client certificate) neither ends the tag early nor leaves it
 * empty (a key whose tag is empty is hashed whole, and a script's keys would land on different
 * Cluster slots). Names without those characters keep the tag they always had.
 */
export const hashTag = (text: string) => `{${/[%{}]/.test(text) ? text.replace(/[%{}]/g, (c) => (c === '%' ? '%25' : c === '{' ? '%7B' : '%7D')) : text}}`;

/** Keys of the tools registered by RPC, shared by every replica. */
export const registryKeys = (prefix = 'dispatch') => ({
  /** The set of tenants (base64url) that have registered tools. */
  tenants: `${prefix}:tool-tenants`,
  /** A hash of tool name -> ToolSpec (binary protobuf, base64) for one tenant. */
  tools: (tenant: string) => `${prefix}:tools:{${encode(tenant)}}`,
  /** The channel on which replicas announce registry changes. */
  channel: `${prefix}:tool-changes`,
});
