import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { createMcpConnection, parseMcpServers, type McpConnection } from '../../src/executors/mcp';
import type { Logger } from '../../src/log';

export const STDIO_SERVER = path.join(__dirname, 'fixtures/stdio-server.js');
/** The stdio fixture that records each start and crashes on tools/list (see the file). */
export const FLAKY_SERVER = path.join(__dirname, 'fixtures/flaky-server.js');
const HTTP_SERVER = path.join(__dirname, 'fixtures/http-server.js');

/** A Streamable HTTP MCP server in a child process, restartable on the same port. */
export interface HttpMcp {
  readonly port: number;
  /** Sessions opened here are answered as SSE streams (the SDK default). */
  readonly url: string;
  /** Sessions opened here are answered as JSON (`enableJsonResponse`). */
  readonly jsonUrl: string;
  /** Kills the server process (SIGKILL) and waits for it to exit. */
  kill(): Promise<void>;
  /** Starts the server again on the same port. */
  restart(): Promise<void>;
}

async function launch(port: number): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [HTTP_SERVER, String(port)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const bound = await new Promise<number>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('the MCP HTTP server did not start')), 10_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /LISTENING (\d+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.once('exit', (code) => reject(new Error(`the MCP HTTP server exited with ${code}`)));
  });
  return { child, port: bound };
}

const exited = (child: ChildProcess) => (child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise<void>((r) => child.once('exit', () => r())));

/** Starts the HTTP fixture on `port` (0: any free one). */
export async function startHttpMcp(port = 0): Promise<HttpMcp> {
  let current = await launch(port);
  const fixed = current.port;
  return {
    port: fixed,
    url: `http://127.0.0.1:${fixed}/mcp`,
    jsonUrl: `http://127.0.0.1:${fixed}/mcp/json`,
    async kill() {
      current.child.kill('SIGKILL');
      await exited(current.child);
    },
    async restart() {
      current = await launch(fixed);
    },
  };
}

/** A free loopback port (nothing listens on it once returned). */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A file the stdio fixture appends each call to, and a reader of its lines. */
export function callLog(): { file: string; lines(): string[] } {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'mcp-calls-')), 'calls.log');
  return {
    file,
    lines: () => {
      try {
        return readFileSync(file, 'utf8').split('\n').filter(Boolean);
      } catch {
        return [];
      }
    },
  };
}

/** YAML of an `mcp_servers` entry for the stdio fixture. */
export function stdioServerYaml(name: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ name, command: [process.execPath, STDIO_SERVER], reconnect_initial_ms: 100, reconnect_max_ms: 400, ...extra });
}

/** A stdio fixture process started by a test, as it recorded itself. */
export interface Started {
  readonly pid: number;
  /** When it started (epoch ms). */
  readonly at: number;
}

/** The processes the flaky fixture (`FLAKY_SERVER`) started for `dir`, in order of start. */
export function startedIn(dir: string): Started[] {
  return readdirSync(dir)
    .filter((name) => /^\d+$/.test(name))
    .map((name) => ({ pid: Number(name), at: Number(readFileSync(path.join(dir, name), 'utf8')) }))
    .sort((a, b) => a.at - b.at);
}

/** Whether process `pid` is running (a zombie, exited but not yet reaped, is not). */
export function isAlive(pid: number): boolean {
  try {
    // The state follows the command name, which is in parentheses and may hold spaces.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** A logger that keeps the fields of each "connection lost" warning in `lost`. */
export function lostLogger(): { lost: Record<string, unknown>[]; logger: Logger } {
  const lost: Record<string, unknown>[] = [];
  const logger: Logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (message, fields) => void (message === 'mcp server connection lost; reconnecting' && lost.push(fields ?? {})),
    error: () => undefined,
  };
  return { lost, logger };
}

/**
 * An MCP connection named `name` to the Streamable HTTP server `server` (its path `/mcp`), started;
 * `close` closes it and the server.
 */
export async function connectHttp(server: Server, name: string, logger: Logger): Promise<{ connection: McpConnection; close(): Promise<void> }> {
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  const connection = createMcpConnection(parseMcpServers([{ name, url }], 'test.yaml')[0]!, { logger, onTools: () => undefined });
  await connection.start();
  return {
    connection,
    async close() {
      await connection.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
