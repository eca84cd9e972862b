import { createHash } from 'node:crypto';
import { Command } from 'ioredis';
import type { RedisClient } from './connect';

/** What the Command constructor is given: nothing for it to copy (see ScriptCommand). */
const NO_ARGS: string[] = [];
/** Replies as text, as a defined command's (not its `...Buffer` variant's) are. */
const AS_TEXT = { replyEncoding: 'utf8' } as const;

/**
 * A Lua script the store runs on every attempt, sent as ioredis's defineCommand sends a script:
 * EVALSHA, but EVAL the first time on a connection and again after Redis answered NOSCRIPT (its
 * script cache lost), replies as text. Only cheaper: ioredis's Command copies its arguments with
 * Array.prototype.flat, which measured 2.3-3.9 µs for the 28 of finish-attempt.lua, and its
 * Script copies them twice more, so the command is built with none and given its arguments,
 * already text, afterwards. The attempt's two steps alone (64 in flight) took 0.77-0.83x the CPU
 * per call of defineCommand's commands, a whole server about 0.94x. The client's keyPrefix is not
 * applied (the store's clients set none).
 */
export interface StoreScript {
  /** Runs the script with `keysThenArgs` (its `numberOfKeys` keys first); resolves with its reply. */
  run<T>(client: RedisClient, keysThenArgs: ReadonlyArray<string | number>): Promise<T>;
}

/** `lua` with its first `numberOfKeys` arguments keys, as defineCommand's `numberOfKeys`. */
export function storeScript(lua: string, numberOfKeys: number): StoreScript {
  const sha = createHash('sha1').update(lua).digest('hex');
  const keyCount = String(numberOfKeys);
  // The connections (sockets) this script was sent on by EVAL, as ioredis's Script keeps them.
  const loaded = new WeakSet<object>();

  class ScriptCommand extends Command {
    constructor(args: string[]) {
      super('evalsha', NO_ARGS, AS_TEXT);
      this.args = args;
    }

    override toWritable(socket: object): string | Buffer {
      const reject = this.reject;
      this.reject = (error) => {
        if (error.message.includes('NOSCRIPT')) loaded.delete(socket);
        reject.call(this, error);
      };
      if (!loaded.has(socket)) {
        loaded.add(socket);
        this.name = 'eval';
        this.args[0] = lua;
      } else if (this.name === 'eval') {
        this.name = 'evalsha';
        this.args[0] = sha;
      }
      return super.toWritable(socket);
    }
  }

  return {
    run<T>(client: RedisClient, keysThenArgs: ReadonlyArray<string | number>): Promise<T> {
      const args = new Array<string>(keysThenArgs.length + 2);
      args[0] = sha;
      args[1] = keyCount;
      for (let i = 0; i < keysThenArgs.length; i++) {
        const arg = keysThenArgs[i];
        args[i + 2] = typeof arg === 'string' ? arg : String(arg);
      }
      const command = new ScriptCommand(args);
      command.promise = command.promise.catch((error: Error) => {
        if (!error.message.includes('NOSCRIPT')) throw error;
        // Sent again, as EVAL on the connection that lost the script (ioredis's Script does the same).
        const again = args.slice();
        again[0] = sha;
        return client.sendCommand(new ScriptCommand(again));
      });
      return client.sendCommand(command) as Promise<T>;
    },
  };
}
