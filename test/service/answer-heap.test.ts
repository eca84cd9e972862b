import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DispatchMode } from '../../gen/dispatch/v1/dispatch_pb';
import { createDispatchClient } from '../../src/client';
import { startDaemon, type Daemon } from '../helpers/daemon';

// A replica with the Helm chart's memory (512Mi pod: V8 heap limit ~259 MiB) ran out of heap on
// one parallel turn of 5 HTTP tools each answering 60 MiB: each answer was read whole as a string
// (up to limits.max_tool_output_chars x 4 = 64 Mi characters) before it was cut to 16 Mi, and
// every call in flight was lost ('FATAL ERROR: Reached heap limit'). Now an answer is read only
// until its text passes max_tool_output_chars, and the bytes read at once are bounded.

const MiB = 1024 * 1024;
const CALLS = 5;
const ANSWER_MIB = 60;
let daemon: Daemon | undefined;
let tools: Server | undefined;

afterEach(async () => {
  daemon?.child.kill('SIGKILL');
  tools?.closeAllConnections();
  await new Promise((resolve) => (tools ? tools.close(resolve) : resolve(undefined)));
});

test(`a turn of ${CALLS} HTTP tools answering ${ANSWER_MIB} MiB each, with a 256 MiB heap: every answer is cut, the replica stays up`, async () => {
  const unit = Buffer.from('ж'.repeat(MiB / 2));
  tools = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
    let sent = 0;
    const pump = () => {
      while (sent < ANSWER_MIB) {
        sent++;
        if (!res.write(unit)) return void res.once('drain', pump);
      }
      res.end();
    };
    pump();
  });
  await new Promise<void>((resolve) => tools!.listen(0, '127.0.0.1', resolve));
  const port = (tools.address() as { port: number }).port;
  const config = join(mkdtempSync(join(tmpdir(), 'answer-heap-')), 'config.yaml');
  writeFileSync(config, `tools:\n  - name: big\n    effect: read_only\n    concurrency_safe: true\n    timeout_ms: 50000\n    retry: { max_attempts: 1 }\n    http: { url: "http://127.0.0.1:${port}/big" }\n`);
  daemon = await startDaemon(['--config', config, '--grace', '1000'], { DISPATCH_AUTH_TOKENS_FILE: '', NODE_OPTIONS: '--max-old-space-size=256 --max-semi-space-size=1' });
  const client = createDispatchClient(`127.0.0.1:${daemon.port}`);
  try {
    const calls = Array.from({ length: CALLS }, (_, i) => ({ id: `c${i}`, name: 'big', arguments: `{"i":${i}}` }));
    const response = await client.dispatch({ sessionId: 'heap', mode: DispatchMode.PARALLEL, calls }, { deadlineMs: 55_000 });
    for (const result of response.results) {
      expect(result.isError).toBe(false);
      expect(result.output.startsWith('жжжж')).toBe(true);
      expect(result.warnings).toContain(`the tool's output was cut at ${16 * MiB} characters before bounding`);
    }
    expect(response.results).toHaveLength(CALLS);
    expect(await Promise.race([daemon.exited.then(() => 'exited'), new Promise((resolve) => setTimeout(resolve, 300, 'alive'))])).toBe('alive');
  } finally {
    client.close();
  }
}, 60_000);
