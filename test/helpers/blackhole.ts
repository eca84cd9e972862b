import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';

/** A loopback port whose connections are never made: a connect to it hangs until given up. */
export interface Blackhole {
  readonly port: number;
  close(): Promise<void>;
}

// A listener whose process blocks at once (Atomics.wait) and so never accepts: once its queue is
// full, the kernel drops each further SYN, and a connect waits as it would for a silent host.
const LISTENER = `const s = require('net').createServer().listen({ port: Number(process.argv[1]), host: '127.0.0.1', backlog: 1 }, () => {
  process.stdout.write(s.address().port + '\\n');
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
});`;

/** Starts a {@link Blackhole} on 127.0.0.1, on `port` (0: any free one; a child process; `close` kills it). */
export async function startBlackhole(port = 0): Promise<Blackhole> {
  const child = spawn(process.execPath, ['-e', LISTENER, String(port)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(child.stdout, 'data')) as [Buffer];
  const bound = Number(String(line).trim());
  const fillers: Socket[] = [];
  const exited = once(child, 'exit');
  const close = async () => {
    for (const socket of fillers) socket.destroy();
    child.kill();
    await exited;
  };
  // Fill the queue: connect until a connection is not made within 300 ms.
  for (;;) {
    const socket = connect(bound, '127.0.0.1').on('error', () => undefined);
    fillers.push(socket);
    const made = await Promise.race([once(socket, 'connect').then(() => true), new Promise<boolean>((r) => setTimeout(r, 300, false))]);
    if (!made) return { port: bound, close };
    if (fillers.length > 64) {
      await close();
      throw new Error('the blackhole listener kept accepting connections');
    }
  }
}
