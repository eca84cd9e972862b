import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { context } from '@opentelemetry/api';
import { startApp } from '../helpers/servers';
import { startOtlpGrpcReceiver } from './otlp-grpc-receiver';

// Issue 6: the async-local-storage context manager slows every await in the process, so the
// trace context travels explicitly on the hot path. These tests fail if one comes back: a traced
// app registers no context manager with the OpenTelemetry API and loads none, and no source file
// uses AsyncLocalStorage or async_hooks.

const SRC = join(__dirname, '..', '..', 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

test('no source file uses AsyncLocalStorage, async_hooks or an OpenTelemetry context manager', () => {
  const files = sourceFiles(SRC);
  expect(files.length).toBeGreaterThan(50);
  const offenders = files.filter((file) => /AsyncLocalStorage|async_hooks|context-async-hooks|ContextManager|setGlobalContextManager/.test(readFileSync(file, 'utf8')));
  expect(offenders).toEqual([]);
});

test('an app with trace export on registers no context manager and loads none', async () => {
  // Over OTLP/gRPC: the OTLP/HTTP transport loads its code with a dynamic import, which jest's
  // module sandbox refuses in-process (the daemon tests cover HTTP).
  const receiver = await startOtlpGrpcReceiver();
  const saved = { ...process.env };
  Object.assign(process.env, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc', OTEL_BSP_SCHEDULE_DELAY: '50' });
  const d = await startApp('tools:\n  - name: echo\n    effect: read_only\n    builtin: { name: echo }\n');
  try {
    const trace = '0af7651916cd43dd8448eb211c80319c';
    await d.dispatch.dispatch({ sessionId: 'ctx', calls: [{ id: 'c1', name: 'echo', arguments: '{}' }] }, { metadata: { traceparent: `00-${trace}-b7ad6b7169203331-01` } });
    await receiver.waitFor((r) => r.spans.some((s) => s.traceId === trace));
    // The API's global context manager is still its no-op default: nothing tracks async context.
    const manager = (context as unknown as { _getContextManager(): object })._getContextManager();
    expect(manager.constructor.name).toBe('NoopContextManager');
    expect(Object.keys(require.cache).filter((m) => m.includes('context-async-hooks') || m.includes('context-zone'))).toEqual([]);
  } finally {
    await d.close();
    process.env = saved;
    await receiver.close();
  }
});
