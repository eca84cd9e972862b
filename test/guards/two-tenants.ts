import { createHash } from 'node:crypto';
import type { ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import type { ReceivedRequest, TestDispatch } from '../helpers/servers';

// Two tenants with their bearer tokens, for the tests of per-tenant shares of a config file's
// tool (concurrency caps, rate limits): the `auth:` section, and a call made as either tenant
// whose arguments name it, so that the tool server's records tell whose call each was.

export type Tenant = 'acme' | 'globex';

const sha = (token: string) => createHash('sha256').update(token).digest('hex');

/** The `auth:` section giving each tenant its token. */
export const TWO_TENANTS_AUTH = `
auth:
  tokens:
    - { tenant: acme, scopes: [dispatch], sha256: ${sha('tok-acme')} }
    - { tenant: globex, scopes: [dispatch], sha256: ${sha('tok-globex')} }
`;

/** A config tool `name` at `url`/`name`, read-only, never retried, any arguments. */
export const plainTool = (url: string, name: string) => `  - name: ${name}
    effect: read_only
    retry: { max_attempts: 1 }
    input_schema: '{"type":"object"}'
    http: { url: "${url}/${name}" }
`;

let calls = 0;
/** One call of `name` on `app` as `tenant`, in a session of its own, with arguments no other call has. */
export function callAs(app: TestDispatch, tenant: Tenant, name: string): Promise<ToolResult> {
  calls++;
  const metadata = { authorization: `Bearer tok-${tenant}` };
  return app.dispatch.dispatch({ sessionId: `${tenant}-${calls}`, calls: [{ id: 'c', name, arguments: JSON.stringify({ tenant, n: calls }) }] }, { metadata }).then((r) => r.results[0]!);
}

/** The requests of `tenant`'s calls a tool server received, in the order they started. */
export const callsOf = (received: readonly ReceivedRequest[], tenant: Tenant, path: string) =>
  received.filter((r) => r.path === path && (r.body.arguments as { tenant?: string } | undefined)?.tenant === tenant).sort((x, y) => x.start - y.start);
