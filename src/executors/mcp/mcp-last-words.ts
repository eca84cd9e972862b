import { redactSecrets } from '../../middleware';

/**
 * What a stdio MCP server said before it went: its exit code or signal and the end of its stderr.
 * A server that crashed at start (a missing module, a bad flag) was logged only as `MCP error
 * -32000: Connection closed`, retried, the reason in a stderr logged at debug level only.
 */

/** The most of a server's stderr kept for its last words, in characters: the end of a trace. */
export const LAST_STDERR_CHARS = 1_000;

/** A stdio server's last words, gathered as they come. */
export interface LastWords {
  /** Keeps the end of what the server wrote on its stderr. */
  heard(chunk: Buffer): void;
  /** Notes how its process ended (the child's `exit` event). */
  exited(code: number | null, signal: string | null): void;
  /** Its exit and the end of its stderr (secrets redacted), for a log line; empty while it runs and said nothing. */
  said(): { exit?: string; stderr?: string };
}

/** A stdio server's last words, empty until it speaks or ends. */
export function lastWords(): LastWords {
  let tail = '';
  let exit: string | undefined;
  return {
    heard(chunk) {
      tail = (tail + chunk.toString()).slice(-LAST_STDERR_CHARS);
    },
    exited(code, signal) {
      exit = code !== null ? `exited with code ${code}` : signal !== null ? `killed by ${signal}` : undefined;
    },
    said() {
      // A trace may print a token it was given (an env dump, a URL): redacted as a tool's output is.
      const stderr = redactSecrets(tail.trim());
      return { ...(exit === undefined ? {} : { exit }), ...(stderr === '' ? {} : { stderr }) };
    },
  };
}
