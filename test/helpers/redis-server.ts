import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { redisTlsArgs, sentinelTlsConf, tlsPortOf, type RedisTls } from './redis-tls';

/** A redis-server this test started (or an external one from REDIS_URL). */
export interface TestRedis {
  readonly url: string;
  readonly port: number;
  /** True when REDIS_URL named a server the test does not control (stop/start throw). */
  readonly external: boolean;
  /** Kills the server (SIGKILL by default, like a crash; the AOF keeps what was acknowledged). */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same port and directory. */
  start(): Promise<void>;
  /** Sends a signal to the running server (SIGSTOP freezes it, SIGCONT resumes it). */
  signal(signal: NodeJS.Signals): void;
  /** Runs redis-cli against it and returns stdout. */
  cli(...args: string[]): string;
  /** With `tls`: its `rediss://` URL (by IP address: the test certificate names 127.0.0.1) and TLS port. */
  readonly tlsUrl?: string;
  readonly tlsPort?: number;
  close(): Promise<void>;
}

/** Persistence of a test server: none (the default), or an fsync'd append-only file. */
export type Persistence = 'none' | 'aof-always';

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

async function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A free loopback port whose cluster bus port (+10000) is free too. Both lie below Linux's
 * ephemeral range (32768-60999), where any outgoing connection of a test running alongside could
 * take a port between this check and the server's bind.
 */
export async function freeRedisPort(): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const port = 20_000 + Math.floor(Math.random() * 2_760);
    if ((await portFree(port)) && (await portFree(port + 10_000))) return port;
  }
  throw new Error('no free port for redis-server');
}

/** Resolves once the server answers PING; rejects after `timeoutMs`. */
export async function waitForRedis(port: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ host: '127.0.0.1', port }, () => socket.write('PING\r\n'));
      socket.setTimeout(500, () => socket.destroy());
      socket.once('data', (d) => {
        socket.destroy();
        resolve(d.toString().startsWith('+PONG'));
      });
      socket.once('error', () => resolve(false));
      socket.once('close', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`redis-server on port ${port} did not answer PING within ${timeoutMs} ms`);
}

/**
 * Spawns a redis-server on a free port (see freeRedisPort) in the directory `dirFor` gives, and
 * resolves once it answers; a server that exits first (another test took the port in between)
 * is spawned again on another port.
 */
async function spawnOnFreePort(dirFor: (port: number) => string, extra: readonly string[] | ((port: number) => readonly string[])): Promise<{ port: number; child: ChildProcess }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freeRedisPort();
    const child = spawnRedis(port, dirFor(port), typeof extra === 'function' ? extra(port) : extra);
    const exited = new Promise<'exited'>((resolve) => child.once('exit', () => resolve('exited')));
    if ((await Promise.race([waitForRedis(port).then(() => 'up' as const), exited])) === 'up') {
      // The PONG may come from another test's server that took the port just before this one
      // (two test files choosing the same free port at once): this one then exits, and the test
      // would share, and see closed under it, the other's server. Only its own answer counts.
      if (serverPid(port) === child.pid) return { port, child };
      await stopChild(child, 'SIGKILL');
    }
    if (attempt === 5) throw new Error(`redis-server exited at start ${attempt} times (ports taken?)`);
  }
}

function spawnRedis(port: number, dir: string, extra: readonly string[]): ChildProcess {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--daemonize', 'no', '--loglevel', 'warning', ...extra], { stdio: 'ignore' });
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

const stopChild = (child: ChildProcess | undefined, signal: NodeJS.Signals) =>
  new Promise<void>((resolve) => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill(signal);
  });

/**
 * Starts a private redis-server on a free loopback port in a temporary directory, or uses
 * REDIS_URL when set and `own` is false. Persistence `aof-always` runs it with
 * `--appendonly yes --appendfsync always`, which keeps every acknowledged write across a restart.
 */
export async function startRedis(options: { persistence?: Persistence; own?: boolean; extraArgs?: readonly string[]; tls?: RedisTls } = {}): Promise<TestRedis> {
  const externalUrl = process.env.REDIS_URL;
  if (externalUrl && !options.own) {
    const port = Number(new URL(externalUrl).port || 6379);
    const unsupported = () => Promise.reject(new Error('an external REDIS_URL server cannot be stopped or started by the test'));
    const noSignal = () => {
      throw new Error('an external REDIS_URL server cannot be signalled by the test');
    };
    return { url: externalUrl, port, external: true, stop: unsupported, start: unsupported, signal: noSignal, cli: (...args) => runCli(port, args), close: async () => undefined };
  }
  const dir = mkdtempSync(join(tmpdir(), 'dispatch-redis-'));
  const persistence = options.persistence === 'aof-always' ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no'];
  const argsOf = (p: number) => [...persistence, ...(options.extraArgs ?? []), ...(options.tls ? redisTlsArgs(p, options.tls) : [])];
  const started = await spawnOnFreePort(() => dir, argsOf);
  const port = started.port;
  const args = argsOf(port);
  const tls = options.tls ? { tlsUrl: `rediss://127.0.0.1:${tlsPortOf(port)}`, tlsPort: tlsPortOf(port) } : {};
  let child: ChildProcess | undefined = started.child;
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    ...tls,
    external: false,
    async stop(signal = 'SIGKILL') {
      await stopChild(child, signal);
      child = undefined;
    },
    async start() {
      if (child) throw new Error('redis-server is already running');
      child = spawnRedis(port, dir, args);
      await waitForRedis(port);
    },
    signal(sig) {
      if (!child) throw new Error('redis-server is not running');
      child.kill(sig);
    },
    cli: (...cliArgs) => runCli(port, cliArgs),
    async close() {
      child?.kill('SIGCONT');
      await stopChild(child, 'SIGKILL');
      child = undefined;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The process id of the redis-server answering on `port`, or undefined. */
function serverPid(port: number): number | undefined {
  try {
    const match = /process_id:(\d+)/.exec(runCli(port, ['INFO', 'server']));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

function runCli(port: number, args: readonly string[]): string {
  const out = spawnSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { encoding: 'utf8', timeout: 10_000 });
  if (out.status !== 0) throw new Error(`redis-cli ${args.join(' ')} failed: ${out.stderr}`);
  return out.stdout;
}

/** A Redis Cluster of masters on loopback, made with `redis-cli --cluster create`. */
export interface TestRedisCluster {
  readonly url: string;
  /** With `tls`: its `rediss-cluster://` URL, the nodes' TLS ports (the cluster announces those to TLS clients). */
  readonly tlsUrl?: string;
  readonly ports: readonly number[];
  /** The ports of the replica nodes (none unless asked for). */
  readonly replicaPorts: readonly number[];
  /** Sends a signal to the node on `port` (SIGSTOP freezes it, SIGCONT resumes it). */
  signal(port: number, signal: NodeJS.Signals): void;
  /** Runs redis-cli against the node on `port` and returns stdout. */
  cli(port: number, ...args: string[]): string;
  /** Kills the node on `port` (SIGKILL: every connection to it closes). */
  kill(port: number): Promise<void>;
  /** Starts the node on `port` again from its cluster config (nodes.conf): the same id and slots, its data gone. */
  restart(port: number): Promise<void>;
  close(): Promise<void>;
}

/** redis-cli against the node on `port`, without holding the event loop (spawnSync does). */
function runCliAsync(port: number, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { encoding: 'utf8', timeout: 10_000 }, (error, stdout, stderr) =>
      error ? reject(new Error(`redis-cli ${args.join(' ')} failed: ${stderr || error.message}`)) : resolve(stdout),
    );
  });
}

/**
 * Starts `masters` cluster-enabled servers, with `replicas` replica nodes each, and joins them into
 * one cluster; resolves once every replica has synced. A node silent for `nodeTimeoutMs` is deemed
 * failed (and failed over, when it has a replica). The cluster is made by hand (slots, epochs,
 * MEET, REPLICATE), as `redis-cli --cluster create` does but without its one-second polls, and
 * replicas sync at once (no diskless-sync delay): 3 masters took 3.2 s, with replicas 9.1 s. Every
 * redis-cli runs asynchronously: clusters started together start side by side, and the test
 * file's other work goes on meanwhile.
 */
export async function startRedisCluster(masters = 3, replicas = 0, options: { nodeTimeoutMs?: number; tls?: RedisTls; extraArgs?: readonly string[] } = {}): Promise<TestRedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'dispatch-redis-cluster-'));
  const ports: number[] = [];
  const children: ChildProcess[] = [];
  const close = async () => {
    for (const c of children) c.kill('SIGCONT');
    await Promise.all(children.map((c) => stopChild(c, 'SIGKILL')));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const clusterArgs = ['--appendonly', 'no', '--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', String(options.nodeTimeoutMs ?? 5_000), '--repl-diskless-sync-delay', '0', ...(options.extraArgs ?? [])];
    const tls = options.tls;
    const nodeArgs = (port: number) => (tls ? [...clusterArgs, ...redisTlsArgs(port, tls, true)] : clusterArgs);
    // With tls-cluster, a node's cluster port is its TLS port (its bus that +10,000): MEET names it.
    const meetPort = (port: number) => (tls ? tlsPortOf(port) : port);
    const nodeDir = (port: number) => {
      const path = join(dir, String(port));
      mkdirSync(path, { recursive: true });
      return path;
    };
    // Side by side (two that chose the same free port: one starts again on another, spawnOnFreePort).
    const started = await Promise.allSettled(Array.from({ length: masters * (1 + replicas) }, () => spawnOnFreePort(nodeDir, nodeArgs)));
    for (const node of started) if (node.status === 'fulfilled') (ports.push(node.value.port), children.push(node.value.child));
    const failed = started.find((node) => node.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    const deadline = Date.now() + 15_000;
    const poll = async (what: string, done: () => Promise<boolean>) => {
      while (!(await done())) {
        if (Date.now() > deadline) throw new Error(`the Redis cluster: ${what} not within 15 s`);
        await new Promise((r) => setTimeout(r, 25));
      }
    };
    const ok = async (port: number, ...args: string[]) => {
      const reply = (await runCliAsync(port, args)).trim();
      if (reply !== 'OK') throw new Error(`redis-cli ${args.join(' ')} on ${port}: ${reply}`);
    };
    const masterPorts = ports.slice(0, masters);
    // Each master its epoch (distinct: no collision to resolve) and its share of the slots.
    await Promise.all(
      masterPorts.map(async (p, i) => {
        await ok(p, 'cluster', 'set-config-epoch', String(i + 1));
        await ok(p, 'cluster', 'addslotsrange', String(Math.floor((16384 * i) / masters)), String(Math.floor((16384 * (i + 1)) / masters) - 1));
      }),
    );
    await Promise.all(ports.slice(1).map((p) => ok(ports[0]!, 'cluster', 'meet', '127.0.0.1', String(meetPort(p)))));
    const ids = await Promise.all(masterPorts.map(async (p) => (await runCliAsync(p, ['cluster', 'myid'])).trim()));
    const replicaPorts = ports.slice(masters);
    // A replica replicates a master once it has heard of it (MEET spreads by gossip).
    await Promise.all(
      replicaPorts.map(async (p, j) => {
        const master = ids[j % masters]!;
        await poll('a replica hearing of its master', async () => (await runCliAsync(p, ['cluster', 'nodes'])).includes(master));
        await ok(p, 'cluster', 'replicate', master);
      }),
    );
    const every = async (check: (p: number) => Promise<boolean>, of: readonly number[]) => (await Promise.all(of.map(check))).every(Boolean);
    await poll('cluster_state:ok on every node', () => every(async (p) => (await runCliAsync(p, ['cluster', 'info'])).includes('cluster_state:ok'), ports));
    // CLUSTER SLOTS (what clients read) lists a replica once it has replicated something.
    for (const p of replicas > 0 ? masterPorts : []) {
      for (let k = 0; (await runCliAsync(p, ['set', `replicate-${k}`, 'x'])).includes('MOVED'); k++);
    }
    const synced = async (p: number) => (await runCliAsync(p, ['info', 'replication'])).includes('master_link_status:up') && (await runCliAsync(ports[0]!, ['cluster', 'slots'])).split('\n').includes(String(p));
    await poll('replicas synced', () => every(synced, replicaPorts));
    const signal = (port: number, sig: NodeJS.Signals) => void children[ports.indexOf(port)]!.kill(sig);
    const kill = (port: number) => stopChild(children[ports.indexOf(port)], 'SIGKILL');
    const restart = async (port: number) => {
      await kill(port);
      children[ports.indexOf(port)] = spawnRedis(port, nodeDir(port), nodeArgs(port));
      await waitForRedis(port);
    };
    const tlsUrl = tls ? { tlsUrl: `rediss-cluster://${ports.map((p) => `127.0.0.1:${tlsPortOf(p)}`).join(',')}` } : {};
    return { url: `redis-cluster://${ports.map((p) => `127.0.0.1:${p}`).join(',')}`, ...tlsUrl, ports, replicaPorts, signal, cli: (port, ...args) => runCli(port, args), kill, restart, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The same as {@link startRedisCluster} (which no longer holds the event loop while starting). */
export const startRedisClusterAsync = startRedisCluster;

/** A Redis Sentinel watching one master, for `redis-sentinel://` URLs. */
export interface TestSentinel {
  readonly port: number;
  /** With `tls`: its TLS port. */
  readonly tlsPort?: number;
  /** Runs redis-cli against the sentinel and returns stdout. */
  cli(...args: string[]): string;
  /** The last lines of the sentinel's log (its view of a failover, for a test's failure message). */
  logTail(lines?: number): string;
  /** Sends a signal to the sentinel (SIGSTOP freezes it, SIGCONT resumes it). */
  signal(signal: NodeJS.Signals): void;
  close(): Promise<void>;
}

/**
 * Starts a sentinel (quorum 1) that monitors the master on `masterPort` under `name`. With
 * `downAfterMs`, it deems a silent master down that soon and fails over (to a replica the master
 * has) within `failoverTimeoutMs`.
 */
export async function startSentinel(masterPort: number, name: string, options: { downAfterMs?: number; failoverTimeoutMs?: number; tls?: RedisTls } = {}): Promise<TestSentinel> {
  const port = await freeRedisPort();
  const dir = mkdtempSync(join(tmpdir(), 'dispatch-sentinel-'));
  const conf = join(dir, 'sentinel.conf');
  const timing = [
    options.downAfterMs === undefined ? '' : `sentinel down-after-milliseconds ${name} ${options.downAfterMs}\n`,
    options.failoverTimeoutMs === undefined ? '' : `sentinel failover-timeout ${name} ${options.failoverTimeoutMs}\n`,
  ].join('');
  const log = join(dir, 'sentinel.log');
  // With `tls`, `masterPort` is the master's TLS port, which the Sentinel names to clients.
  const tls = options.tls ? sentinelTlsConf(port, options.tls) : '';
  writeFileSync(conf, `port ${port}\nbind 127.0.0.1\ndir ${dir}\nlogfile ${log}\n${tls}sentinel monitor ${name} 127.0.0.1 ${masterPort} 1\n${timing}`);
  const child = spawn('redis-server', [conf, '--sentinel'], { stdio: 'ignore' });
  running.add(child);
  child.once('exit', () => running.delete(child));
  await waitForRedis(port);
  return {
    port,
    ...(options.tls ? { tlsPort: tlsPortOf(port) } : {}),
    cli: (...args) => runCli(port, args),
    logTail: (lines = 20) => (existsSync(log) ? readFileSync(log, 'utf8').trimEnd().split('\n').slice(-lines).join('\n') : '(no log)'),
    signal: (sig) => void child.kill(sig),
    async close() {
      child.kill('SIGCONT');
      await stopChild(child, 'SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The commands clients send to a server, seen through MONITOR (commands run by scripts excluded). */
export interface RedisMonitor {
  /** Command names sent by clients since the monitor started, lowercase, in order. */
  commands(): string[];
  stop(): void;
}

/** Starts MONITOR on a server; resolves once it is watching. */
export function monitorRedis(port: number): Promise<RedisMonitor> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: '127.0.0.1', port }, () => socket.write('MONITOR\r\n'));
    let buffer = '';
    let watching = false;
    const seen: string[] = [];
    socket.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('latin1');
      let nl: number;
      while ((nl = buffer.indexOf('\r\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 2);
        if (!watching && line === '+OK') {
          watching = true;
          resolve({ commands: () => [...seen], stop: () => socket.destroy() });
          continue;
        }
        const match = /^\+[\d.]+ \[\d+ ([^\]]+)\] "([^"]+)"/.exec(line);
        if (match && match[1] !== 'lua') seen.push(match[2]!.toLowerCase());
      }
    });
    socket.once('error', reject);
  });
}
