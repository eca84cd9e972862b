import * as grpc from '@grpc/grpc-js';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import type { Logger } from '../../src/log';
import { startApp } from '../helpers/servers';
import { startWorkerApp } from '../workers/worker-app';
import { echoAnswer, startWorker } from '../workers/worker-harness';

// Ids a client chooses are logged: approval_id and worker_id are bounded at 256 characters, as
// session_id is, and an approval id nobody waits on is logged at debug only.

jest.setTimeout(20_000);

function capturingLogger() {
  const lines: { level: string; message: string }[] = [];
  const at = (level: string) => (message: string) => void lines.push({ level, message });
  const logger: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
  return { logger, lines };
}

test('ResolveApproval refuses an approval_id over 256 characters; an unknown one is logged at debug', async () => {
  const { logger, lines } = capturingLogger();
  const d = await startApp('tools: []\n', { logger });
  try {
    await expect(d.dispatch.resolveApproval({ approvalId: 'x'.repeat(257), approve: true })).rejects.toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      details: 'approval_id is 257 characters long, over the limit of 256',
    });
    expect((await d.dispatch.resolveApproval({ approvalId: 'x'.repeat(256), approve: true })).resolved).toBe(false);
    expect(lines.filter((l) => l.message.startsWith('approval'))).toEqual([{ level: 'debug', message: 'approval not resolved' }]);
  } finally {
    await d.close();
  }
});

test('a worker hello with a worker_id over 256 characters is refused and registers nothing', async () => {
  const t = await startWorkerApp();
  const tool = { name: 'w_echo', inputSchema: '{"type":"object"}', effect: Effect.READ_ONLY };
  try {
    const long = startWorker(t.address, { id: 'w'.repeat(257), tools: [tool] });
    const status = await long.ended;
    expect(status.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(status.details).toBe('worker_id is 257 characters long, over the limit of 256');
    expect((await t.registry.listTools({})).tools.map((x) => x.name)).not.toContain('w_echo');
    await t.worker({ id: 'w'.repeat(256), tools: [tool], answer: echoAnswer('w') });
    expect((await t.registry.listTools({})).tools.map((x) => x.name)).toContain('w_echo');
  } finally {
    await t.close();
  }
});
