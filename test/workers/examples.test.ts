import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { dispatchTurn } from '../../examples/typescript/backend';
import { runWorker } from '../../examples/typescript/worker';
import { startApp } from '../helpers/servers';
import { eventually } from './worker-harness';

describe('the TypeScript examples against a running dispatch', () => {
  it('the worker hosts ts_reverse and the backend dispatches a turn to it', async () => {
    const t = await startApp(readFileSync(path.join(__dirname, '../../examples/tools.yaml'), 'utf8'));
    const log: string[] = [];
    const worker = runWorker({ address: t.address, workerId: 'ts-1', heartbeatMs: 200, log: (line) => log.push(line) });
    try {
      await eventually(async () => (await t.registry.listTools({})).tools.some((x) => x.name === 'ts_reverse'), 10_000, 'the worker');
      const lines = await dispatchTurn(t.address);
      expect(lines[0]).toBe('call_1 ok tool=echo attempts=1: {"text":"hello from typescript"}');
      expect(lines[1]).toBe('call_2 ok tool=ts_reverse attempts=1: hctapsid');
      expect(lines[2]).toMatch(/^call_3 error UNKNOWN_TOOL tool=ecko attempts=0: .*did you mean/);
      expect(log).toContain('completed ts_reverse call=call_2 attempt=1 error=false');
      worker.stop();
      expect((await worker.done).code).toBe(0);
      const after = await dispatchTurn(t.address, [{ id: 'x', name: 'ts_reverse', arguments: '{"text":"a"}' }]);
      expect(after[0]).toMatch(/^x error UNAVAILABLE tool=ts_reverse attempts=2: /);
    } finally {
      worker.stop();
      await t.close();
    }
  });
});
