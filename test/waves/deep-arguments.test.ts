import { DispatchMode, ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startApp, type TestDispatch } from '../helpers/servers';

// A call whose arguments nest past max_argument_depth is refused INVALID_ARGUMENTS, "the tool was
// not executed", and its turn goes on. A parallel turn's planner reads every call's keys before
// any call is prepared: it canonicalised such arguments recursively and overflowed the stack, so
// the whole turn failed INTERNAL, its other calls lost. Through the real app and gRPC.

let d: TestDispatch;

beforeAll(async () => {
  d = await startApp(`
tools:
  - { name: echo, effect: read_only, concurrency_safe: true, input_schema: '{"type":"object"}', builtin: { name: echo } }
  - { name: read_file, effect: read_only, concurrency_safe: true, resource_key: /path, input_schema: '{"type":"object"}', builtin: { name: echo } }
  - { name: read_region, effect: read_only, concurrency_safe: true, resource_key: /region, input_schema: '{"type":"object","properties":{"region":{"default":"eu"}}}', builtin: { name: echo } }
`);
});
afterAll(async () => {
  await d?.close();
});

/** 50,000 levels of arrays: 100 KB, well within the argument size limit. */
const DEEP = '['.repeat(50_000) + ']'.repeat(50_000);

describe.each([
  ['SEQUENTIAL', DispatchMode.SEQUENTIAL],
  ['PARALLEL', DispatchMode.PARALLEL],
])('%s', (name, mode) => {
  test.each([
    ['echo', `{"q":${DEEP}}`],
    ['read_file', `{"path":${DEEP}}`],
    ['read_region', `{"region":${DEEP}}`],
  ])('a %s call nested 50,000 deep is refused INVALID_ARGUMENTS; its sibling runs', async (tool, deep) => {
    const { results } = await d.dispatch.dispatch({
      sessionId: `deep-${name}-${tool}`,
      mode,
      calls: [
        { id: 'deep', name: tool, arguments: deep },
        { id: 'fine', name: 'echo', arguments: '{"q":1}' },
      ],
    });
    expect(results.map((r) => [r.toolCallId, r.isError ? ErrorKind[r.error!.kind] : r.output])).toEqual([
      ['deep', 'INVALID_ARGUMENTS'],
      ['fine', '{"q":1}'],
    ]);
    expect(results[0]!.error!.message).toContain('nest deeper than 64 levels');
  });
});
