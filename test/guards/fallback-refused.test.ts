import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { closedPort, errorJson, startGuardedApp } from './helpers';

// Found by a probe: a call whose tool was unreachable fell back to a tool a policy blocks, and the
// model, which had called primary, got a BLOCKED of the fallback ("do not retry this call") in
// place of its own recoverable UNAVAILABLE. A fallback refused before it ran now leaves the call
// with the error of the tool it called, and a warning says why no fallback ran.

test('a fallback a policy blocks leaves the call with its own error, and a warning', async () => {
  const port = await closedPort();
  const d = await startGuardedApp(`
tools:
  - name: primary
    effect: read_only
    retry: { max_attempts: 1 }
    fallback_tool: danger
    input_schema: '{"type":"object"}'
    http: { url: "http://127.0.0.1:${port}/unreachable" }
  - { name: danger, effect: read_only, input_schema: '{"type":"object"}', builtin: { name: echo } }
policies:
  - { match: danger, decide: block, reason: "danger is off limits" }
`);
  try {
    const { results } = await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c1', name: 'primary', arguments: '{}' }] });
    const r = results[0]!;
    expect(r.error?.kind).toBe(ErrorKind.UNAVAILABLE);
    expect(r.resolvedToolName).toBe('primary');
    expect(errorJson(r.output)).toMatchObject({ kind: 'UNAVAILABLE', tool: 'primary', recoverable: true });
    expect(r.warnings).toContain('no fallback ran: its fallback_tool "danger" was refused: blocked by policy: danger is off limits');
  } finally {
    await d.close();
  }
});
