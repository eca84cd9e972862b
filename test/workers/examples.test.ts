import { status } from '@grpc/grpc-js';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { dispatchTurn } from '../../examples/typescript/backend';
import { keepWorking, runWorker } from '../../examples/typescript/worker';
import { buildApp } from '../../src/app';
import { parseConfig } from '../../src/config';
import { SILENT_LOGGER } from '../../src/log';
import { serveApp, startApp } from '../helpers/servers';
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

describe('the TypeScript worker kept working (keepWorking)', () => {
  it('opens a new stream when dispatchd restarts, and its tool is served again', async () => {
    const tools = readFileSync(path.join(__dirname, '../../examples/tools.yaml'), 'utf8');
    let t = await startApp(tools);
    const port = Number(t.address.split(':')[1]);
    const log: string[] = [];
    const worker = keepWorking({ address: t.address, workerId: 'ts-kept', heartbeatMs: 200, initialBackoffMs: 100, maxBackoffMs: 400, log: (line) => log.push(line) });
    try {
      await eventually(async () => (await t.registry.listTools({})).tools.some((x) => x.name === 'ts_reverse'), 10_000, 'the worker');
      await t.close();
      // The same address again, as a restarted replica behind a Service.
      const app = await buildApp(parseConfig(tools, 'examples/tools.yaml'), { logger: SILENT_LOGGER });
      t = await serveApp(app, undefined, `127.0.0.1:${port}`);
      await eventually(async () => (await t.registry.listTools({})).tools.some((x) => x.name === 'ts_reverse'), 10_000, 'the worker back on the restarted server');
      const lines = await dispatchTurn(t.address, [{ id: 'y', name: 'ts_reverse', arguments: '{"text":"abc"}' }]);
      expect(lines[0]).toBe('y ok tool=ts_reverse attempts=1: cba');
      // dispatchd's shutdown ends the stream (OK, drained); the worker opens a new one.
      expect(log.some((line) => /^stream ended \([A-Z_]+: .*\); a new one in \d+ ms$/.test(line))).toBe(true);
      worker.stop();
      expect((await worker.done).code).toBe(0);
    } finally {
      worker.stop();
      await t.close();
    }
  });

  it('stops, without retrying, when its stream is refused for a reason a retry would meet again', async () => {
    const sha256 = createHash('sha256').update('right').digest('hex');
    const t = await startApp(`auth:\n  tokens:\n    - { tenant: a, scopes: [worker], sha256: ${sha256} }\ntools: []\n`);
    const worker = keepWorking({ address: t.address, token: 'wrong', initialBackoffMs: 10, log: () => undefined });
    try {
      expect((await worker.done).code).toBe(status.UNAUTHENTICATED);
    } finally {
      worker.stop();
      await t.close();
    }
  });
});
