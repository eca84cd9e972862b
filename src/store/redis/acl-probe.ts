import { createHash } from 'node:crypto';
import { ReplyError } from 'ioredis';
import type { Logger } from '../../log';
import type { RedisClient } from './connect';
import { aclProblem, warnMisconfigured, type ConfigContext } from './misconfiguration';
import { registryKeys, sessionKeys } from './session-keys';
import { failureReason } from './store-call';

/**
 * Whether the ACL lets dispatch's user do its work, asked once the connection is ready: a user
 * that may not run scripts or touch `dispatch:*` keys otherwise served with every side-effecting
 * call failing STORE_UNAVAILABLE, the log a NOPERM line per call.
 */

/** The commands dispatch and its scripts send, each on a key or channel of its namespace under `prefix`. */
const needed = (key: string, channel: string): readonly (readonly string[])[] => [
  ...['GET', 'DEL', 'EXISTS', 'PTTL', 'TYPE', 'INCR', 'LRANGE', 'ZCARD', 'HGETALL', 'SMEMBERS'].map((c) => [c, key]),
  ['SET', key, 'v'],
  ['GETRANGE', key, '0', '1'],
  ['EXPIRE', key, '1'],
  ['PEXPIRE', key, '1'],
  ['PEXPIREAT', key, '1'],
  ['HGET', key, 'f'],
  ['HMGET', key, 'f'],
  ['HSET', key, 'f', 'v'],
  ['HDEL', key, 'f'],
  ['HEXISTS', key, 'f'],
  ['HLEN', key],
  ['HINCRBY', key, 'f', '1'],
  ['LPUSH', key, 'v'],
  ['RPUSH', key, 'v'],
  ['LTRIM', key, '0', '1'],
  ['ZADD', key, '1', 'm'],
  ['ZRANGE', key, '0', '1'],
  ['ZRANGEBYSCORE', key, '0', '1'],
  ['ZRANK', key, 'm'],
  ['ZREM', key, 'm'],
  ['ZREMRANGEBYSCORE', key, '0', '1'],
  ['SADD', key, 'm'],
  ['EVAL', 'return 0', '1', key],
  ['EVALSHA', '0000000000000000000000000000000000000000', '1', key],
  ['MULTI'],
  ['EXEC'],
  ['TIME'],
  ['PUBLISH', channel, 'm'],
  ['SUBSCRIBE', channel],
  ['PUBSUB', 'NUMSUB', channel],
];

/**
 * Reads one key of dispatch's namespace (EVAL checks the key first), writes nothing, and on
 * Redis 7+ asks redis.acl_check_cmd about each command dispatch needs: the denied ones, as text.
 * (ACL DRYRUN would say the same, but an application user is rarely allowed ACL commands.)
 */
const SCRIPT = `redis.call('EXISTS', KEYS[1])
if not redis.acl_check_cmd then return {} end
local denied = {}
for _, c in ipairs(cjson.decode(ARGV[1])) do
  if not redis.acl_check_cmd(unpack(c)) then denied[#denied + 1] = c[1] .. (c[2] and (' ' .. c[2]) or '') end
end
return denied`;
const SHA = createHash('sha1').update(SCRIPT).digest('hex');

/** How long the probe may take before it is given up (no answer is no finding), in ms. */
const PROBE_TIMEOUT_MS = 2_000;

/**
 * What the ACL of the client's user refused dispatch (a NOPERM reply, or the commands denied), to
 * name in aclProblem; undefined when nothing was refused, or the probe could not tell (Redis
 * away, busy, no scripting at all: those show elsewhere). Runs EVAL, then EVALSHA of the same script,
 * on a key and a channel under `prefix` (the store's: RedisStoreOptions.prefix).
 */
export async function aclProbe(client: RedisClient, prefix = 'dispatch'): Promise<string | undefined> {
  // A key and a channel of the store's namespace (RedisStoreOptions.prefix): what its user is granted.
  const key = sessionKeys({ tenant: 'acl-probe', sessionId: 'acl-probe' }, prefix).window;
  const CHECKS = JSON.stringify(needed(key, registryKeys(prefix).channel));
  const run = async () => {
    const byEval = (await client.eval(SCRIPT, 1, key, CHECKS)) as string[];
    const bySha = (await client.evalsha(SHA, 1, key, CHECKS)) as string[];
    const denied = [...new Set([...byEval, ...bySha])];
    return denied.length === 0 ? undefined : `NOPERM denied on ${prefix}:* keys and channels: ${denied.join(', ')}`;
  };
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), PROBE_TIMEOUT_MS)));
  try {
    return await Promise.race([run(), timeout]);
  } catch (error) {
    const message = error instanceof ReplyError ? (error as Error).message : '';
    return /^NOPERM/i.test(message) ? message : undefined;
  } finally {
    clearTimeout(timer);
  }
}

/** Marks a command whose reject is watched already (sent again after a reconnection): a property, not a WeakSet entry per command. */
const WATCHED = Symbol('dispatch.aclWatched');
type Sender = { sendCommand(command: { readonly name?: string; reject: (error: Error) => void; [WATCHED]?: true }, ...rest: unknown[]): unknown };

/**
 * Logs a command Redis refused for the ACL (NOPERM, or on Redis 7.0 a script's command the ACL
 * denies, answered ERR: failureReason tells both) as the ACL problem it is, naming the user and
 * the rules dispatch needs, at most once a minute (warnMisconfigured): the call itself fails as
 * it did (STORE_UNAVAILABLE), its own log line saying the command.
 */
export function warnRefusedCommands(client: RedisClient, ctx: ConfigContext, logger: Logger): void {
  const sender = client as unknown as Sender;
  const send = sender.sendCommand.bind(client);
  sender.sendCommand = (command, ...rest) => {
    if (command[WATCHED] !== true) {
      command[WATCHED] = true;
      const reject = command.reject;
      command.reject = (error: Error) => {
        // CONFIG GET is the settings check's, optional (its refusal is noted once at info): blamed,
        // it took the warning's minute from a refusal that fails calls.
        if (failureReason(error) === 'permission' && command.name !== 'config') warnMisconfigured(logger, aclProblem(undefined, ctx), { connection: ctx.name, mode: ctx.target.mode, error: error.message });
        reject(error);
      };
    }
    return send(command, ...rest);
  };
}
