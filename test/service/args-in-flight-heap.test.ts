import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDispatchClient } from '../../src/client';
import { startDaemon, type Daemon } from '../helpers/daemon';

// A replica with the Helm chart's memory (512Mi pod: V8 heap limit ~259 MiB) ran out of heap on
// 32 turns at once of 4 calls with 1,000,000-character arguments (128 Mi characters, half of the
// old limits.max_argument_chars_in_flight default of 256 Mi: ~2.2 bytes of heap per character in
// flight), losing every call in flight. The default is now 32 Mi: the turns past it are refused
// RESOURCE_EXHAUSTED before anything runs, and the replica stays up.

const TURNS = 32;

test(`${TURNS} turns of 4 x 1,000,000-character arguments at once, with a 256 MiB heap: those past the default bound are refused, the replica stays up`, async () => {
  // The calls are answered once every turn has come and been admitted (its first call reached this
  // server) or refused, or at the latest 5 s after the first call came (all 32 turns reach the
  // replica within ~1 s of it). Until then the turns admitted hold their arguments in flight, as
  // they did when every call was held 5 s; waiting out the 5 s after that showed nothing more. The
  // replica sends the calls of the turns it admitted ~8 at a time: the later ones answer at once.
  let firstCallAt = 0;
  const admitted = new Set<number>();
  let refused = 0;
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const decided = () => void (admitted.size + refused >= TURNS && open());
  const tools = createServer((req, res) => {
    firstCallAt ||= Date.now();
    let head = '';
    req.on('data', (chunk: Buffer) => {
      if (head.length > 200) return;
      head += chunk.toString('latin1', 0, 200);
      const turn = /"t":(\d+)/.exec(head)?.[1];
      if (turn !== undefined) {
        admitted.add(Number(turn));
        decided();
      }
    });
    const timer = setTimeout(open, Math.max(0, firstCallAt + 5_000 - Date.now()));
    void opened.then(() => {
      clearTimeout(timer);
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => tools.listen(0, '127.0.0.1', resolve));
  const port = (tools.address() as { port: number }).port;
  const config = join(mkdtempSync(join(tmpdir(), 'args-heap-')), 'config.yaml');
  writeFileSync(config, `tools:\n  - name: slow\n    effect: read_only\n    concurrency_safe: true\n    timeout_ms: 30000\n    retry: { max_attempts: 1 }\n    input_schema: '{"type":"object"}'\n    http: { url: "http://127.0.0.1:${port}/slow" }\n`);
  const daemon: Daemon = await startDaemon(['--config', config, '--grace', '1000'], { DISPATCH_AUTH_TOKENS_FILE: '', NODE_OPTIONS: '--max-old-space-size=256 --max-semi-space-size=1' });
  const client = createDispatchClient(`127.0.0.1:${daemon.port}`);
  const pad = 'x'.repeat(1_000_000);
  const outcomes: Record<string, number> = {};
  try {
    await Promise.all(
      Array.from({ length: TURNS }, async (_, t) => {
        const calls = Array.from({ length: 4 }, (_, i) => ({ id: `c${i}`, name: 'slow', arguments: `{"t":${t},"i":${i},"pad":"${pad}"}` }));
        let outcome: string;
        try {
          const response = await client.dispatch({ sessionId: `s${t}`, calls }, { deadlineMs: 50_000 });
          outcome = response.results.every((r) => !r.isError) ? 'ok' : 'soft error';
        } catch (error) {
          const { code, details } = error as { code?: number; details?: string };
          outcome = code === 8 && /limits\.max_argument_chars_in_flight/.test(details ?? '') ? 'refused' : `error ${code} ${details}`;
          if (outcome === 'refused') {
            refused++;
            decided();
          }
        }
        outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
      }),
    );
    expect(Object.keys(outcomes).sort()).toEqual(['ok', 'refused']);
    expect(outcomes.ok).toBeGreaterThanOrEqual(1);
    expect(await Promise.race([daemon.exited.then(() => 'exited'), new Promise((resolve) => setTimeout(resolve, 300, 'alive'))])).toBe('alive');
  } finally {
    client.close();
    daemon.child.kill('SIGKILL');
    tools.closeAllConnections();
    tools.close();
  }
}, 60_000);
