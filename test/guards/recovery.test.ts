import { create } from '@bufbuild/protobuf';
import { status } from '@grpc/grpc-js';
import { Effect, ToolSpecSchema } from '../../gen/dispatch/v1/tool_pb';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError } from '../../src/errors';
import { createRecoveryReflector, fallbackFor } from '../../src/guards';
import type { Failure } from '../../src/pipeline';
import { resolveTool } from '../../src/registry';
import { json, startToolServer, type ToolRoute, type ToolServer } from '../helpers/servers';
import { closedPort, errorJson, errorReason, startGuardedApp } from './helpers';

const toolOf = (effect: Effect, fallbackTool = 'backup') =>
  resolveTool(create(ToolSpecSchema, { name: 'primary', effect, fallbackTool, retry: { maxAttempts: 1 } }), '', { schema: {}, validate: Object.assign(() => true, { errors: null }) as never });
const failure = (effect: Effect, kind: ErrorKind, phase: 'before' | 'during' | 'after', httpStatus?: number): Failure => ({
  tool: toolOf(effect),
  args: { q: 1 },
  error: new DispatchError(kind, 'x', { phase, httpStatus, recoverable: true }),
  attempt: 1,
  attemptsSoFar: 1,
});

test.each<[string, Failure, string | undefined]>([
  ['read-only unreachable', failure(Effect.READ_ONLY, ErrorKind.UNAVAILABLE, 'before'), 'backup'],
  ['read-only breaker open', failure(Effect.READ_ONLY, ErrorKind.BREAKER_OPEN, 'before'), 'backup'],
  ['read-only timeout', failure(Effect.READ_ONLY, ErrorKind.TIMEOUT, 'during'), 'backup'],
  ['read-only 503', failure(Effect.READ_ONLY, ErrorKind.TOOL_ERROR, 'after', 503), 'backup'],
  ['read-only 404', failure(Effect.READ_ONLY, ErrorKind.TOOL_ERROR, 'after', 404), undefined],
  ['read-only invalid output', failure(Effect.READ_ONLY, ErrorKind.UNEXPECTED, 'after'), undefined],
  ['side-effect unreachable', failure(Effect.SIDE_EFFECT, ErrorKind.UNAVAILABLE, 'before'), 'backup'],
  ['side-effect breaker open', failure(Effect.SIDE_EFFECT, ErrorKind.BREAKER_OPEN, 'before'), 'backup'],
  ['side-effect timeout', failure(Effect.SIDE_EFFECT, ErrorKind.TIMEOUT, 'during'), undefined],
  ['side-effect 500', failure(Effect.SIDE_EFFECT, ErrorKind.TOOL_ERROR, 'after', 500), undefined],
  ['side-effect reset mid-request', failure(Effect.SIDE_EFFECT, ErrorKind.UNAVAILABLE, 'during'), undefined],
])('fallback for %s: %s', (_name, f, expected) => {
  expect(fallbackFor(f)).toBe(expected);
});

test('the reflector: the retry tree first, then the fallback, then fixed arguments that differ', async () => {
  const reflector = createRecoveryReflector({ fixArguments: ({ args }) => ({ ...(args as object), fixed: true }) });
  const retried = await reflector.reflect({ ...failure(Effect.READ_ONLY, ErrorKind.UNAVAILABLE, 'before'), tool: resolveTool(create(ToolSpecSchema, { name: 'p', effect: Effect.READ_ONLY }), '', { schema: {}, validate: (() => true) as never }) });
  expect(retried).toMatchObject({ retry: true, reason: 'transient failure (UNAVAILABLE)' });
  expect(retried.retry && retried.correction).toBeUndefined();
  expect(await reflector.reflect(failure(Effect.READ_ONLY, ErrorKind.TOOL_ERROR, 'after', 502))).toEqual({ retry: true, delayMs: 0, reason: 'falling back to "backup" after TOOL_ERROR', correction: { tool: 'backup', note: '"primary" failed with TOOL_ERROR' } });
  expect(await reflector.reflect(failure(Effect.READ_ONLY, ErrorKind.TOOL_ERROR, 'after', 422))).toMatchObject({ retry: true, correction: { arguments: { q: 1, fixed: true } } });
  const same = createRecoveryReflector({ fixArguments: ({ args }) => ({ ...(args as object) }) });
  expect(await same.reflect(failure(Effect.READ_ONLY, ErrorKind.TOOL_ERROR, 'after', 422))).toEqual({ retry: false, reason: 'HTTP 422 is never retried' });
});

describe('recovery through the gRPC service', () => {
  let tools: ToolServer;
  let d: Awaited<ReturnType<typeof startGuardedApp>> | undefined;
  const strict: ToolRoute = (req, res) => {
    const ok = (req.body.arguments as { mode?: string }).mode === 'strict';
    res.writeHead(ok ? 200 : 422).end(ok ? 'done' : 'mode must be strict');
  };
  const yaml = () => `
tools:
  - name: primary
    effect: read_only
    retry: { max_attempts: 1 }
    fallback_tool: backup
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/primary" }
  - name: backup
    effect: read_only
    input_schema: '{"type":"object","properties":{"q":{"type":"string"}}}'
    http: { url: "${tools.url}/backup" }
  - name: writer
    effect: side_effect
    fallback_tool: backup
    input_schema: '{"type":"object"}'
    http: { url: "http://127.0.0.1:${down}/down" }
  - name: picky
    effect: read_only
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/strict" }
`;
  let down = 0;
  beforeEach(async () => {
    down = await closedPort();
    tools = await startToolServer({ '/primary': json({ error: 'overloaded' }, 0, 500), '/backup': json({ from: 'backup' }), '/strict': strict });
  });
  afterEach(async () => {
    await d?.close();
    d = undefined;
    await tools.close();
  });

  test('a 5xx of a tool with fallback_tool re-runs the whole attempt on the fallback', async () => {
    d = await startGuardedApp(yaml());
    const res = await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c1', name: 'primary', arguments: '{"q":"x"}' }, { id: 'c2', name: 'writer', arguments: '{"q":"y"}' }] });
    // writer first uses its own second attempt: a failure before execution is retried.
    expect(res.results.map((r) => [r.isError, r.output, r.resolvedToolName, r.attempts])).toEqual([
      [false, '{"from":"backup"}', 'backup', 2],
      [false, '{"from":"backup"}', 'backup', 3],
    ]);
    expect(res.results[0]!.warnings).toContain('fell back from "primary" to "backup": "primary" failed with TOOL_ERROR');
    expect(res.results[1]!.warnings).toContain('fell back from "writer" to "backup": "writer" failed with UNAVAILABLE');
    expect(tools.count('/primary')).toBe(1);
    expect(tools.count('/backup')).toBe(2);
    expect(d.events.filter((e) => e.kind === 'TOOL_PRE').map((e) => `${e.toolCallId}:${e.tool}`)).toEqual(['c1:primary', 'c1:backup', 'c2:writer', 'c2:writer', 'c2:backup']);
  });

  test('a fallback whose schema refuses the arguments is not run; the original error is returned', async () => {
    d = await startGuardedApp(yaml());
    const res = await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c1', name: 'primary', arguments: '{"q":5}' }] });
    expect(errorJson(res.results[0]!.output)).toMatchObject({ kind: 'TOOL_ERROR', attempts: 1 });
    expect(tools.count('/backup')).toBe(0);
  });

  test('fixed arguments from a pluggable function re-run the attempt', async () => {
    d = await startGuardedApp(yaml(), { fixArguments: ({ error, args }) => (error.httpStatus === 422 ? { ...(args as object), mode: 'strict' } : undefined) });
    const res = await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c1', name: 'picky', arguments: '{"mode":"loose"}' }] });
    expect(res.results[0]).toMatchObject({ output: 'done', attempts: 2 });
    expect(res.results[0]!.warnings).toContain('arguments corrected after attempt 1: after TOOL_ERROR');
    expect(tools.received.map((r) => r.body.arguments)).toEqual([{ mode: 'loose' }, { mode: 'strict' }]);
  });

  test('a reflector that throws (a plugin bug) ends its call with its error, not retried, and the turn keeps its other results', async () => {
    d = await startGuardedApp(yaml(), {
      reflector: {
        reflect: () => {
          throw new Error('reflector bug');
        },
      },
    });
    const res = await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c1', name: 'picky', arguments: '{}' }, { id: 'c2', name: 'backup', arguments: '{"q":"x"}' }] });
    expect(res.results.map((r) => [r.isError, r.attempts])).toEqual([
      [true, 1],
      [false, 1],
    ]);
    expect(errorJson(res.results[0]!.output)).toMatchObject({ kind: 'TOOL_ERROR' });
    expect(res.results[1]!.output).toBe('{"from":"backup"}');
    expect(tools.count('/strict')).toBe(1);
  });

  test('a fixArguments that throws ends its call with its error, not retried', async () => {
    d = await startGuardedApp(yaml(), {
      fixArguments: () => {
        throw new Error('fixer bug');
      },
    });
    const res = await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c1', name: 'picky', arguments: '{}' }] });
    expect(res.results[0]).toMatchObject({ isError: true, attempts: 1 });
    expect(tools.count('/strict')).toBe(1);
  });

  test('a reflector that always retries hits the ceiling: ABORTED RECOVERY_EXHAUSTED after 5 attempts', async () => {
    d = await startGuardedApp(yaml(), { reflector: { reflect: () => ({ retry: true, delayMs: 0, reason: 'try again' }) } });
    const call = d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c1', name: 'picky', arguments: '{}' }] });
    const error = await call.catch((e: unknown) => e);
    expect(error).toMatchObject({ code: status.ABORTED, details: 'call c1 to "picky" failed 5 times; recovery gave up after 5 attempts' });
    expect(errorReason(error)).toBe('RECOVERY_EXHAUSTED');
    expect(tools.count('/strict')).toBe(5);
  });
});
