import fc from 'fast-check';
import { create } from '@bufbuild/protobuf';
import { DispatchMode, DispatchRequestSchema, type ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { createPipeline } from '../../src/app';
import { parseConfig } from '../../src/config';
import type { BuiltinTool } from '../../src/executors';
import { SILENT_LOGGER } from '../../src/log';
import type { CallObserver, TurnContext, TurnObserver } from '../../src/pipeline';
import { createParallelDispatcher } from '../../src/waves';

// The runner in-process, through the real pipeline with a built-in tool that logs when each call
// starts and ends: for random turns, the log must respect the plan's rules and the results must
// come back in request order.

type LogEntry = { kind: 'received' | 'start' | 'end' | 'observer-end'; id: string };
const log: LogEntry[] = [];
const probe: BuiltinTool = async (args, ctx) => {
  log.push({ kind: 'start', id: ctx.toolCallId });
  await new Promise((resolve) => setTimeout(resolve, (args as { ms: number }).ms));
  log.push({ kind: 'end', id: ctx.toolCallId });
  return JSON.stringify({ id: ctx.toolCallId });
};

const deps = createPipeline({
  logger: SILENT_LOGGER,
  builtins: new Map([['probe', probe]]),
  config: parseConfig(
    `
tools:
  - { name: read_file, effect: read_only, concurrency_safe: true, resource_key: /path, builtin: { name: probe } }
  - { name: fetch, effect: read_only, concurrency_safe: true, builtin: { name: probe } }
  - { name: write_file, effect: side_effect, resource_key: /path, builtin: { name: probe } }
`,
    'waves.yaml',
  ),
});
afterAll(() => deps.store.close());

function recordingObserver(): TurnObserver {
  return {
    call(info): CallObserver {
      log.push({ kind: 'received', id: info.toolCallId });
      return {
        attempt: () => ({ traceparent: undefined, post() {} }),
        retry() {},
        loopWarning() {},
        loopStop() {},
        replay() {},
        approvalRequested() {},
        approvalResolved() {},
        end: () => void log.push({ kind: 'observer-end', id: info.toolCallId }),
      };
    },
    end() {},
  };
}

const callArb = fc.record({
  name: fc.constantFrom('read_file', 'read_file', 'fetch', 'write_file', 'nope'),
  path: fc.constantFrom('a', 'b', 'c'),
  ms: fc.integer({ min: 0, max: 3 }),
});

let session = 0;
const dispatchParallel = createParallelDispatcher();

test('random turns: results in request order, and the tool sees the plan respected', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(callArb, { minLength: 2, maxLength: 12 }), fc.integer({ min: 0, max: 3 }), async (specs, maxConcurrency) => {
      log.length = 0;
      const calls = specs.map((s, i) => ({ id: `c${i}`, name: s.name, arguments: JSON.stringify({ path: s.path, ms: s.ms, n: i }) }));
      const request = create(DispatchRequestSchema, { sessionId: `s${session++}`, calls, mode: DispatchMode.PARALLEL, maxConcurrency });
      const turn: TurnContext = { tenant: '', sessionId: request.sessionId, turn: 0, signal: new AbortController().signal, deadline: Infinity, interactive: false, observer: recordingObserver() };
      const results: ToolResult[] = await dispatchParallel(deps, turn, request);

      expect(results.map((r) => r.toolCallId)).toEqual(calls.map((c) => c.id));
      results.forEach((r, i) => expect(r.isError ? r.error?.kind : JSON.parse(r.output).id).toEqual(specs[i]!.name === 'nope' ? expect.anything() : `c${i}`));

      const firstStart = log.findIndex((e) => e.kind === 'start');
      expect(log.slice(0, calls.length).map((e) => e.kind)).toEqual(calls.map(() => 'received'));
      expect(firstStart === -1 || firstStart >= calls.length).toBe(true);
      expect(log.filter((e) => e.kind === 'observer-end').map((e) => e.id).sort()).toEqual(calls.map((c) => c.id).sort());

      const at = (kind: LogEntry['kind'], id: string) => log.findIndex((e) => e.kind === kind && e.id === id);
      const limit = maxConcurrency === 0 ? 8 : maxConcurrency;
      let inFlight = 0;
      for (const e of log) {
        if (e.kind === 'start') inFlight++;
        if (e.kind === 'end') inFlight--;
        expect(inFlight).toBeLessThanOrEqual(limit);
      }
      const ran = specs.map((s, i) => ({ ...s, id: `c${i}`, i })).filter((s) => s.name !== 'nope');
      const exclusive = (name: string) => name === 'write_file' || name === 'nope';
      for (const a of specs.map((s, i) => ({ ...s, i }))) {
        for (const b of ran) {
          if (b.i <= a.i) continue;
          const conflict = exclusive(a.name) || exclusive(b.name) || (a.name === 'read_file' && b.name === 'read_file' && a.path === b.path);
          if (!conflict) continue;
          // The later call starts only after the earlier one's wave is over.
          expect(at('start', b.id)).toBeGreaterThan(at('observer-end', `c${a.i}`));
        }
      }
    }),
    { numRuns: 60 },
  );
});
