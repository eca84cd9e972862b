import { Redis } from 'ioredis';
import type { Logger } from '../../log';
import { aclProbe } from './acl-probe';
import type { RedisClient } from './connect';
import { createConnectionLog } from './connection-log';
import { aclProblem, misconfiguration, selectFailed, warnMisconfigured, type ConfigContext } from './misconfiguration';
import type { RedisTarget } from './redis-url';

/**
 * What each client's connection last reported that waiting will not cure, until it is ready again;
 * with `probe` set (by whenReady), the ACL probe of its latest ready (see aclProbe).
 */
export interface ConnectionState {
  problem?: string;
  readonly waiters: Set<(problem: string) => void>;
  probe?: Promise<string | undefined>;
  runProbe(): Promise<string | undefined>;
}
const problems = new WeakMap<RedisClient, ConnectionState>();

/** The state watchConnection keeps of `client`, if it watches it. */
export const connectionState = (client: RedisClient): ConnectionState | undefined => problems.get(client);

/**
 * Logs each outage once and each recovery, every line naming the connection (`connection`:
 * ctx.name) and bounded per connection (createConnectionLog); an 'error' listener keeps ioredis
 * from throwing. A configuration Redis refuses is logged naming what to fix, once per interval
 * across connections (see warnMisconfigured), and kept for whenReady.
 */
export function watchConnection(client: RedisClient, ctx: ConfigContext, logger: Logger | undefined, prefix?: string): void {
  const mode = ctx.target.mode;
  const named = { connection: ctx.name, mode };
  const log = createConnectionLog(logger, named, () => client.status === 'ready');
  const report = (problem: string, error: string, logged = problem) => {
    state.problem = problem;
    for (const waiter of state.waiters) waiter(problem);
    warnMisconfigured(logger, logged, { ...named, error });
  };
  const state: ConnectionState = {
    waiters: new Set(),
    runProbe: () =>
      (state.probe = aclProbe(client, prefix).then((refusal) => {
        // Logged as a refused command is (warnRefusedCommands): one line a minute, whatever was refused.
        if (refusal !== undefined) report(aclProblem(refusal, ctx), refusal, aclProblem(undefined, ctx));
        return refusal;
      })),
  };
  problems.set(client, state);
  /** True from dropping a connection whose SELECT failed until it closes: what fails meanwhile is that. */
  let dropping = false;
  client.on('error', (error: Error) => {
    // ioredis goes on after a failed SELECT, on database 0: another deployment's keys. Whatever
    // SELECT answered (no such database, or BUSY while a script runs), the connection is dropped.
    const select = selectFailed(error) && client instanceof Redis && client.status === 'connect';
    if (select) {
      dropping = true;
      client.disconnect(true);
    }
    const problem = misconfiguration(error, ctx);
    if (problem !== undefined) return report(problem, error.message);
    if (dropping && !select) return;
    // A SELECT that waiting may cure (BUSY, LOADING): said as what it is, once per outage.
    log.error(select ? 'redis refused to select the database for now; reconnecting' : 'redis error', error.message, tlsHint(ctx.target, error));
  });
  client.on('close', () => {
    dropping = false;
    // Closed by its owner (quit, disconnect: dispatchd stopping), not lost: the client has ended.
    if (client.status !== 'end') log.lost();
  });
  client.on('ready', () => {
    log.ready();
    state.problem = undefined;
    // Each ready of a client whenReady was asked about: a Redis back with another ACL is noticed.
    if (state.probe) void state.runProbe();
  });
}

/** How a TLS handshake with a server that speaks plain TCP fails: it waits for a command, or answers the hello as one. */
const HANDSHAKE_FAILED = /ETIMEDOUT|ECONNRESET|EPROTO|wrong version number|packet length too long|socket hang up|before secure TLS connection/i;

/**
 * What to check when a `rediss://` connection fails as a TLS handshake with a plain server does:
 * only `connect ETIMEDOUT` was logged, though the TCP connection was made (the server waits for a
 * command, the client for the handshake's answer).
 */
function tlsHint(target: RedisTarget, error: Error): { hint?: string } {
  if (target.mode !== 'standalone' || !target.tls || !HANDSHAKE_FAILED.test(error.message)) return {};
  return { hint: 'the URL asks for TLS (rediss://); a server that speaks plain TCP never completes the handshake: use redis:// for it, or enable TLS on the server (tls-port)' };
}
