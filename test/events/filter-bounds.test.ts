import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import { retainedHeap } from '../helpers/heap';
import { startApp, type TestDispatch } from '../helpers/servers';
import { ECHO_TOOL_YAML, tapEvents } from './event-tap';

// A Subscribe stream keeps its request, and its filter's tool names, for as long as it is open:
// 1,024 names of 4,000 characters were ~4.2 MB a stream (16 streams held 67.5 MB of the server's
// heap; a tenant's 64, some 270 MB per replica). No tool has a name past 128 characters, so a
// filter of every name it could want is 1,024 x 128 characters.

let d: TestDispatch;
beforeAll(async () => {
  d = await startApp(ECHO_TOOL_YAML);
});
afterAll(() => d?.close());

const names = (count: number, chars: number, tag = '') => Array.from({ length: count }, (_, i) => `${tag}${i}-`.padEnd(chars, 'x'));

test('a tools filter of 1,024 names of the longest a tool may have is taken; one of longer names is refused INVALID_ARGUMENT, saying why', async () => {
  const tap = await tapEvents(d.address, { tools: names(1024, 128) });
  tap.close();
  await expect(tapEvents(d.address, { tools: names(1024, 4000) })).rejects.toMatchObject({
    code: status.INVALID_ARGUMENT,
    details: 'the tools in the filter take 4096000 characters, over the limit of 131072 (1024 names of 128 characters, the longest a tool name may be)',
  });
});

test("streams asking for huge tool filters do not take the server's memory", async () => {
  const before = retainedHeap();
  // The client in a process of its own: only the server's heap is measured.
  const script = `
const { createDispatchClient } = require(${JSON.stringify(join(process.cwd(), 'dist/src/client'))});
const client = createDispatchClient(${JSON.stringify(d.address)});
(async () => {
  for (let s = 0; s < 16; s++) {
    const tools = Array.from({ length: 1024 }, (_, i) => (s + '-' + i + '-').padEnd(4000, 'x'));
    const stream = client.subscribe({ tools });
    await new Promise((resolve) => { stream.once('metadata', resolve); stream.once('error', resolve); });
  }
  process.stdout.write('ready\\n');
})();`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    await new Promise<void>((resolve) => child.stdout.on('data', (b: Buffer) => b.toString().includes('ready') && resolve()));
    expect(retainedHeap() - before).toBeLessThan(16 * 1024 * 1024);
  } finally {
    child.kill();
  }
}, 60_000);
