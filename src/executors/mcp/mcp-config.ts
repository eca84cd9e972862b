import { ConfigError } from '../../config';
import { unknownKeyProblem } from '../../config/unknown-key';
import { withEnv } from '../../config/env-refs';
import { MAX_TIMER_MS } from '../../options/limits';

/** One MCP server from the config's `mcp_servers:` list, every default filled in. */
export interface McpServerConfig {
  /** Names the server in tool specs (`mcp: { server }`) and in logs. */
  readonly name: string;
  /** A stdio server: the command and its arguments (exclusive with `url`). */
  readonly command?: readonly string[];
  /** Added to the inherited safe environment of a stdio server. */
  readonly env: Readonly<Record<string, string>>;
  readonly cwd?: string;
  /** A Streamable HTTP server's endpoint (exclusive with `command`). */
  readonly url?: string;
  /** Headers sent to a Streamable HTTP server (credentials, ...). */
  readonly headers: Readonly<Record<string, string>>;
  /** Put before every imported tool's name. @default `${name}_` */
  readonly prefix: string;
  /** Whether the server's annotations may mark its tools read-only. @default false */
  readonly trusted: boolean;
  /**
   * Tools (as the server names them, without the prefix) the operator vouches only read: imported
   * read-only and concurrency-safe whatever the server's annotations say, trusted or not. Before,
   * the way to say so was a config file's tool pinned to the server's, its schema copied. @default []
   */
  readonly readOnly: ReadonlySet<string>;
  /** The imported tools' timeout; 0 means the tool default (30 s). @default 0 */
  readonly timeoutMs: number;
  /** How long one connection attempt may take. @default 10000 */
  readonly connectTimeoutMs: number;
  /** First delay before reconnecting a dropped server, doubled per failure. @default 500 */
  readonly reconnectInitialMs: number;
  /** Longest delay between reconnection attempts. @default 30000 */
  readonly reconnectMaxMs: number;
  /**
   * After a call that got no answer (it timed out or was cancelled), the server is pinged; one that
   * does not answer within this many ms (a hung process, a server gone without closing) is
   * dropped and connected to again. @default 5000
   */
  readonly pingTimeoutMs: number;
  /**
   * How long a call may wait for a dropped server to be connected again, within its deadline,
   * instead of failing UNAVAILABLE at once: it waits only while a connection attempt is under way
   * or one is due within this time, so a short restart is hidden and a long outage is not paid for
   * by every call. 0 fails at once. @default 2000
   */
  readonly reconnectWaitMs: number;
}

const KEYS = ['name', 'command', 'env', 'cwd', 'url', 'headers', 'prefix', 'trusted', 'read_only', 'timeout_ms', 'connect_timeout_ms', 'reconnect_initial_ms', 'reconnect_max_ms', 'ping_timeout_ms', 'reconnect_wait_ms'];
const SERVER_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
const PREFIX = /^[A-Za-z0-9_.:-]{0,64}$/;
/** The largest value of a `*_ms` key: a longer timer would fire after 1 ms (an imported tool's timeout is 32-bit too). */
const TIMER = { max: MAX_TIMER_MS, why: 'Node runs longer timers at once' };
/** A reconnection delay gets up to 20% jitter added (mcp-backoff.ts): the jittered delay must still fit a timer. */
const RECONNECT = { max: Math.floor(MAX_TIMER_MS / 1.2), why: 'Node runs longer timers at once, and a reconnection delay gets up to 20% jitter added' };
/** A server's timeout_ms is its imported tools' timeout: a uint32 as any tool's (the pipeline holds its timers to MAX_TIMER_MS). */
const TOOL_TIMEOUT = { max: 2 ** 32 - 1, why: "it becomes each imported tool's timeout_ms, a 32-bit field" };

/** Parses and checks the `mcp_servers:` section; errors name the file, the path and the fix. */
export function parseMcpServers(raw: readonly unknown[], file: string): McpServerConfig[] {
  const names = new Set<string>();
  return raw.map((entry, i) => {
    const at = (key?: string) => `mcp_servers[${i}]${key ? `.${key}` : ''}`;
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) throw new ConfigError(file, at(), 'must be a mapping with name and command or url');
    const e = entry as Record<string, unknown>;
    const unknown = Object.keys(e).find((k) => !KEYS.includes(k));
    if (unknown) throw new ConfigError(file, at(unknown), unknownKeyProblem(unknown, KEYS));
    if (typeof e.name !== 'string' || !SERVER_NAME.test(e.name)) throw new ConfigError(file, at('name'), 'must be 1-64 letters, digits, "_", "." or "-"');
    if (names.has(e.name)) throw new ConfigError(file, at('name'), `duplicate server name "${e.name}"`);
    names.add(e.name);
    if ((e.command === undefined) === (e.url === undefined)) throw new ConfigError(file, at(), 'needs exactly one of command (a stdio server) or url (a Streamable HTTP server)');
    const command = e.command === undefined ? undefined : commandOf(e.command, file, at('command'));
    const url = e.url === undefined ? undefined : urlOf(e.url, file, at('url'));
    if (url && (e.env !== undefined || e.cwd !== undefined)) throw new ConfigError(file, at(e.env !== undefined ? 'env' : 'cwd'), 'applies only to a stdio server (command)');
    if (command && e.headers !== undefined) throw new ConfigError(file, at('headers'), 'applies only to a Streamable HTTP server (url)');
    // The HTTP client (undici) drops a header named exactly __proto__, as for an HTTP tool (http-headers.ts).
    if (typeof e.headers === 'object' && e.headers !== null && Object.hasOwn(e.headers, '__proto__')) {
      throw new ConfigError(file, at('headers.__proto__'), 'is never sent by the HTTP client (it drops a header of exactly that name); write it in another case, such as "__Proto__" (header names ignore case)');
    }
    if (e.cwd !== undefined && (typeof e.cwd !== 'string' || e.cwd === '')) throw new ConfigError(file, at('cwd'), 'must be a directory path');
    const prefix = e.prefix === undefined ? `${e.name}_` : e.prefix;
    if (typeof prefix !== 'string' || !PREFIX.test(prefix)) throw new ConfigError(file, at('prefix'), 'must be at most 64 letters, digits, "_", ".", ":" or "-" (it starts tool names)');
    if (e.trusted !== undefined && typeof e.trusted !== 'boolean') throw new ConfigError(file, at('trusted'), 'must be true or false');
    const reconnectInitialMs = intOf(e.reconnect_initial_ms, 500, file, at('reconnect_initial_ms'), 1, RECONNECT);
    const reconnectMaxMs = intOf(e.reconnect_max_ms, 30_000, file, at('reconnect_max_ms'), 1, RECONNECT);
    if (reconnectMaxMs < reconnectInitialMs) throw new ConfigError(file, at('reconnect_max_ms'), `must be at least reconnect_initial_ms (${reconnectInitialMs})`);
    return {
      name: e.name,
      command,
      env: mapOf(e.env, file, at('env'), true),
      cwd: e.cwd as string | undefined,
      url,
      headers: mapOf(e.headers, file, at('headers'), true),
      prefix,
      trusted: e.trusted === true,
      readOnly: namesOf(e.read_only, file, at('read_only')),
      timeoutMs: e.timeout_ms === undefined ? 0 : intOf(e.timeout_ms, 0, file, at('timeout_ms'), 1, TOOL_TIMEOUT),
      connectTimeoutMs: intOf(e.connect_timeout_ms, 10_000, file, at('connect_timeout_ms')),
      reconnectInitialMs,
      reconnectMaxMs,
      pingTimeoutMs: intOf(e.ping_timeout_ms, 5_000, file, at('ping_timeout_ms')),
      reconnectWaitMs: intOf(e.reconnect_wait_ms, 2_000, file, at('reconnect_wait_ms'), 0),
    };
  });
}

/** A list of tool names as a server lists them (read_only). */
function namesOf(value: unknown, file: string, path: string): ReadonlySet<string> {
  if (value === undefined || value === null) return new Set();
  if (!Array.isArray(value) || value.some((name) => typeof name !== 'string' || name === '')) {
    throw new ConfigError(file, path, 'must be a list of the tool names the server lists (without the prefix), like [search, fetch]');
  }
  return new Set(value as string[]);
}

function commandOf(value: unknown, file: string, path: string): string[] {
  if (!Array.isArray(value) || value.length === 0 || value.some((part) => typeof part !== 'string' || part === '')) {
    throw new ConfigError(file, path, 'must be a non-empty list of strings, the program first, like [node, server.js]');
  }
  return value as string[];
}

function urlOf(raw: unknown, file: string, path: string): string {
  const value = typeof raw === 'string' ? withEnv(raw, file, path) : raw;
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    throw new ConfigError(file, path, `${JSON.stringify(value)} is not a URL (like http://127.0.0.1:8080/mcp)`);
  }
  if (typeof value !== 'string' || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw new ConfigError(file, path, `must be an http or https URL, got ${JSON.stringify(value)}`);
  return value;
}

/** A mapping of names to text; with `fromEnv`, `${NAME}` in its strings read from the environment (env-refs.ts). */
function mapOf(value: unknown, file: string, path: string, fromEnv = false): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new ConfigError(file, path, 'must be a mapping of names to values');
  // No prototype: an env variable named __proto__ stays an entry (assigned into `{}` it was dropped).
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') throw new ConfigError(file, `${path}.${k}`, 'must be a string, number or boolean');
    out[k] = fromEnv && typeof v === 'string' ? withEnv(v, file, `${path}.${k}`) : String(v);
  }
  return out;
}

function intOf(value: unknown, fallback: number, file: string, path: string, min = 1, bound = TIMER): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw new ConfigError(file, path, `must be a ${min === 0 ? 'non-negative' : 'positive'} integer (milliseconds), got ${JSON.stringify(value)}`);
  }
  if (value > bound.max) throw new ConfigError(file, path, `must be at most ${bound.max} (milliseconds; ${bound.why}), got ${value}`);
  return value;
}
