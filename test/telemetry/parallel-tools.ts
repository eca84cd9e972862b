/** Tools of the parallel turns the telemetry tests time: `nap` sleeps, `quick` echoes beside it, `solo` (not concurrency-safe) runs in a wave of its own. */
export const PARALLEL_TOOLS = `
tools:
  - name: nap
    effect: read_only
    concurrency_safe: true
    input_schema: '{"type":"object"}'
    builtin: { name: sleep }
  - name: quick
    effect: read_only
    concurrency_safe: true
    input_schema: '{"type":"object"}'
    builtin: { name: echo }
  - name: solo
    effect: read_only
    input_schema: '{"type":"object"}'
    builtin: { name: echo }
`;
