import { throttledPerLogger, type Logger } from '../../log';
import type { CredentialSources, RedisTarget } from './redis-url';

/**
 * The ACL rules a dispatch user needs (docs/redis.md, "ACL"): its keys and channels, the commands
 * it and its scripts run. dispatchd runs under exactly these in test/redis/acl.test.ts.
 */
export const REQUIRED_ACL = '~dispatch:* &dispatch:* -@all +@read +@write +@scripting +@pubsub +@transaction +@connection -@dangerous +info +time +cluster|slots +config|get';

/** REQUIRED_ACL for a store whose keys and channels are under `prefix` (RedisStoreOptions.prefix). */
export const requiredAcl = (prefix = 'dispatch'): string => REQUIRED_ACL.replace('~dispatch:* &dispatch:*', `~${prefix}:* &${prefix}:*`);

/**
 * Redis refused dispatch's configuration (a password, a database number): unlike Redis being away,
 * waiting will not cure it. The message names what to fix.
 */
export class RedisConfigError extends Error {
  override readonly name = 'RedisConfigError';
}

/** How often one configuration problem is logged while it lasts (after start-up), in ms. */
export const MISCONFIGURED_LOG_INTERVAL_MS = 60_000;

/** An error a connection reported: ioredis adds the command, a Cluster the last node's error. */
type ConnectionError = Error & { readonly command?: { readonly name?: string }; readonly lastNodeError?: Error };

/** What the URL's connections were given, to name in a message. */
export interface ConfigContext {
  readonly target: RedisTarget;
  /** Unknown when the caller passed a RedisTarget instead of a URL. */
  readonly sources?: CredentialSources;
  /** The key prefix of the store on these connections (RedisConnectOptions.prefix), whose ACL a refusal names. @default "dispatch" */
  readonly prefix?: string;
  /** The connection's name (RedisConnectOptions.name), in its log lines. */
  readonly name?: string;
}

const REFUSED_PASSWORD = /^(WRONGPASS|ERR invalid password|ERR invalid username-password)/i;
const NO_PASSWORD = /^NOAUTH/i;
const NO_PERMISSION = /^NOPERM/i;
/** What a Sentinel answers when it monitors no master of the URL's name. */
const NO_SUCH_MASTER = /^ERR No such master with that name/i;
/** What ioredis's sentinel connector says once every Sentinel failed; the last one's error follows. */
const ALL_SENTINELS_FAILED = /^All sentinels are unreachable\b.*?Last error: (.+)$/s;

/** The problem an authentication error shows, of the master's (or the server's) or the Sentinels' credentials. */
function authProblem(reply: string, ctx: ConfigContext, sentinels: boolean): string | undefined {
  const t = ctx.target;
  const who = sentinels ? 'the Sentinels' : t.mode === 'sentinel' ? `the master the Sentinels name (${t.name})` : 'redis';
  const variable = sentinels ? 'DISPATCH_REDIS_SENTINEL_PASSWORD' : 'DISPATCH_REDIS_PASSWORD';
  const inUrl = sentinels ? "the Redis URL's sentinel_password parameter" : 'the password in the Redis URL (redis://:PASSWORD@host:port)';
  const given = sentinels ? t.mode === 'sentinel' && t.sentinelPassword !== undefined : t.password !== undefined;
  const username = sentinels ? (t.mode === 'sentinel' ? t.sentinelUsername : undefined) : t.username;
  const from = sentinels ? ctx.sources?.sentinelPassword : ctx.sources?.password;
  const which = from === 'url' ? inUrl : from === 'env' ? `the password from ${variable}` : `the password (from ${variable} or ${inUrl})`;
  const user = username === undefined ? '' : ` of user "${username}"`;
  const requires = sentinels ? 'require' : 'requires';
  if (NO_PERMISSION.test(reply)) return aclProblem(reply, ctx, sentinels);
  if (REFUSED_PASSWORD.test(reply) || (NO_PASSWORD.test(reply) && given)) return `${who} refused ${which}${user}: set it to the password ${who} ${requires} (${reply})`;
  if (NO_PASSWORD.test(reply)) return `${who} ${requires} a password and none was given: set ${variable}, or ${inUrl} (${reply})`;
  return undefined;
}

/**
 * What an ACL refusal (a NOPERM reply, or the permission probe's list of denied commands) says: the
 * user refused, the reply (when given: left out of a line logged for every command refused), and the rules dispatch needs (of the master or server; of the Sentinels with `sentinels`).
 */
export function aclProblem(reply: string | undefined, ctx: ConfigContext, sentinels = false): string {
  const t = ctx.target;
  const server = sentinels ? 'the Sentinels' : t.mode === 'sentinel' ? `the master the Sentinels name (${t.name})` : 'redis';
  const username = sentinels ? (t.mode === 'sentinel' ? t.sentinelUsername : undefined) : t.username;
  const user = username === undefined ? 'the default user' : `user "${username}"`;
  return `${server} refused a command dispatch needs to ${user}: grant it in the user's ACL${reply === undefined ? '' : ` (${reply})`}${sentinels ? '' : `; dispatch needs ${requiredAcl(ctx.prefix)}`}`;
}

/** True when `error` is the answer to the connection's SELECT (the URL's database number), whatever it said. */
export function selectFailed(error: ConnectionError): boolean {
  return error.command?.name === 'select' || /DB index is out of range|SELECT is not allowed in cluster mode|'select' command/i.test(error.message);
}

/** SELECT's answers that say the server will never take the URL's database number. */
const NO_SUCH_DATABASE = /^ERR DB index is out of range/i;
const CLUSTER_NODE = /^ERR SELECT is not allowed in cluster mode/i;
/** A proxy that has no SELECT, or a server with the command renamed away: only database 0 is there. */
const NO_SELECT = /^ERR unknown command/i;

/**
 * The configuration problem a failed SELECT shows, or undefined when waiting may cure it: a
 * server busy running a script (BUSY), loading its data (LOADING), and whatever else SELECT may
 * answer for a while. The connection is dropped either way (see connectRedis), never used on
 * database 0. (NOPERM is the ACL's, said by authProblem.)
 */
function selectProblem(reply: string, ctx: ConfigContext): string | undefined {
  const t = ctx.target;
  const db = t.mode === 'standalone' ? t.db : 0;
  if (CLUSTER_NODE.test(reply)) return `redis is a Cluster node, and a Cluster has only database 0: use a redis-cluster:// URL, without a database number (${reply})`;
  if (NO_SUCH_DATABASE.test(reply)) return `redis has no database ${db}, the number at the end of the Redis URL (redis://host:port/${db}): use one below the server's "databases" setting (16 by default) (${reply})`;
  if (NO_SELECT.test(reply)) return `redis does not take SELECT (a proxy, or the command renamed), so it has only database 0: remove the number at the end of the Redis URL (redis://host:port/${db}) (${reply})`;
  return undefined;
}

/**
 * The configuration problem `error` shows, as a message naming what to fix; undefined for any
 * other error (Redis away, a timeout, a failover, a busy server), which waiting may cure. Through
 * Sentinel, an authentication error every Sentinel answered is the Sentinels' credentials, one on
 * the connection itself the master's.
 */
export function misconfiguration(error: ConnectionError, ctx: ConfigContext): string | undefined {
  const reply = error.message;
  const t = ctx.target;
  if (t.mode === 'sentinel') {
    const lastSentinelError = ALL_SENTINELS_FAILED.exec(reply)?.[1]?.trim();
    if (lastSentinelError !== undefined && NO_SUCH_MASTER.test(lastSentinelError)) {
      return `the Sentinels monitor no master named "${t.name}", the name at the end of the Redis URL (redis-sentinel://host:port/${t.name}): use the name of their "sentinel monitor" line (${lastSentinelError})`;
    }
    if (lastSentinelError !== undefined) return authProblem(lastSentinelError, ctx, true);
  }
  if (t.mode === 'cluster' && error.lastNodeError) return misconfiguration(error.lastNodeError, ctx);
  if (NO_PERMISSION.test(reply)) return authProblem(reply, ctx, false);
  if (selectFailed(error)) return selectProblem(reply, ctx);
  return authProblem(reply, ctx, false);
}

const misconfiguredLog = throttledPerLogger(MISCONFIGURED_LOG_INTERVAL_MS);

/**
 * Logs a configuration problem at most once per MISCONFIGURED_LOG_INTERVAL_MS per logger, however
 * many connections (store, subscribers, relays) report it: each reconnection of each would
 * otherwise log it again.
 */
export function warnMisconfigured(logger: Logger | undefined, problem: string, fields: Record<string, unknown>): void {
  if (logger) misconfiguredLog(logger)(problem, fields);
}
