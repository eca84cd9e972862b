import { Effect } from '../../gen/dispatch/v1/tool_pb';
import type { Logger } from '../../src/log';
import { eventually } from '../workers/worker-harness';
import { startWorkerApp } from '../workers/worker-app';

// dispatch logged a worker connecting, not one going: a worker it ended (heartbeats missed, its
// assignments unread, its token revoked) left the reason only in its failed calls' messages, and
// one that disconnected left nothing. Each now has its line: a warning naming the reason for a
// stream dispatch ended, an info line for one the worker ended.

const lines: { level: string; message: string; fields: Record<string, unknown> }[] = [];
const record = (level: string) => (message: string, fields: Record<string, unknown> = {}) => void lines.push({ level, message, fields });
const logger: Logger = { debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error') };
const tools = (name: string) => [{ name, inputSchema: '{"type":"object"}', effect: Effect.READ_ONLY }];

test('a worker past its heartbeats is logged with the reason; one that disconnects, as such', async () => {
  const t = await startWorkerApp({ heartbeatTimeoutMs: 400, sweepIntervalMs: 100 }, { logger });
  try {
    const silent = await t.worker({ id: 'silent', tools: tools('w_silent') });
    silent.stopHeartbeats();
    await silent.ended;
    await eventually(() => lines.some((line) => line.message === 'worker stream ended by dispatch'), 5_000, 'the end logged');
    expect(lines.find((line) => line.message === 'worker stream ended by dispatch')).toMatchObject({ level: 'warn', fields: { worker: 'silent', tenant: 'default', code: 'UNAVAILABLE', reason: 'HEARTBEAT_MISSED' } });
    const leaving = await t.worker({ id: 'leaving', tools: tools('w_leaving') });
    leaving.disconnect();
    await eventually(() => lines.some((line) => line.message === 'worker disconnected' && line.fields.worker === 'leaving'), 5_000, 'the disconnect logged');
    expect(lines.filter((line) => line.fields.worker === 'leaving' && line.message !== 'worker connected')).toEqual([{ level: 'info', message: 'worker disconnected', fields: { worker: 'leaving', tenant: 'default' } }]);
  } finally {
    await t.close();
  }
});
