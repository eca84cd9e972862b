import * as grpc from '@grpc/grpc-js';
import { routeGrpcLog } from '../../src/cli/grpc-log';
import { createLogger } from '../../src/log';
import { createDispatchClient } from '../../src/client';
import { startDaemon } from '../helpers/daemon';

// An SRE's finding: dispatchd's log is JSON lines, but grpc-js wrote its own lines as plain text
// (`D 2026-12-07T03:42:03.397Z | v1.14.7 14036 | server | (1) Server constructed` with
// GRPC_TRACE, and its errors as `E ...`), which a log pipeline parsing every line as JSON drops.
// They are now lines of dispatchd's log, `component: "grpc-js"`.

jest.setTimeout(30_000);

test('with GRPC_VERBOSITY=DEBUG and GRPC_TRACE, every line dispatchd writes is JSON, grpc-js trace lines among them', async () => {
  const daemon = await startDaemon([], { GRPC_VERBOSITY: 'DEBUG', GRPC_TRACE: 'server' });
  const client = createDispatchClient(`127.0.0.1:${daemon.port}`);
  try {
    const { results } = await client.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 'echo', arguments: '{"a":1}' }] });
    expect(results[0]!.output).toBe('{"a":1}');
  } finally {
    client.close();
    daemon.child.kill('SIGTERM');
  }
  expect(await daemon.exited).toBe(0);
  const lines = daemon.stderr().split('\n').filter((line) => line !== '').map((line) => {
    try {
      return JSON.parse(line) as Record<string, unknown>;
    } catch {
      throw new Error(`a stderr line is not JSON: ${line}`);
    }
  });
  const own = lines.filter((line) => line.component === 'grpc-js');
  // From the server's construction on, before the app's own start-up line.
  expect(own.map((line) => line.message)).toContainEqual(expect.stringMatching(/^grpc-js: v[\d.]+ \d+ \| server \| \(\d+\) Server constructed$/));
  // The client's address, or `undefined` when its socket had closed first.
  expect(own.map((line) => line.message)).toContainEqual(expect.stringMatching(/\| server \| \(\d+\) Closing session initiated by (127\.0\.0\.1|undefined)$/));
  expect(new Set(own.map((line) => line.level))).toEqual(new Set(['info']));
  expect(lines.findIndex((line) => line.component === 'grpc-js')).toBeLessThan(lines.findIndex((line) => line.message === 'dispatchd serving'));
});

test("grpc-js's errors are error lines, its info and trace lines info lines; its bind failure is left to dispatchd's own line", () => {
  const seen: Record<string, unknown>[] = [];
  routeGrpcLog(createLogger('debug', (line) => seen.push(JSON.parse(line) as Record<string, unknown>) > 0));
  try {
    grpc.experimental.log(grpc.logVerbosity.ERROR, 'Connection failed', 'twice');
    grpc.experimental.log(grpc.logVerbosity.ERROR, 'No address added out of total 1 resolved');
  } finally {
    grpc.setLogger(console);
  }
  expect(seen.map(({ level, message, component }) => ({ level, message, component }))).toEqual([{ level: 'error', message: 'grpc-js: Connection failed twice', component: 'grpc-js' }]);
});
