import { startDispatch, startToolServer, json } from './helpers/servers';

test('echo and http tool', async () => {
  const tools = await startToolServer({ '/weather': json({ temp: 21 }) });
  const d = await startDispatch(`
tools:
  - name: echo
    effect: read_only
    builtin: { name: echo }
  - name: weather
    effect: read_only
    input_schema: '{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}'
    http: { url: "${tools.url}/weather" }
`);
  try {
    const res = await d.dispatch.dispatch({ sessionId: 's1', calls: [
      { id: 'c1', name: 'echo', arguments: '{"a":1}' },
      { id: 'c2', name: 'weather', arguments: '{"city":"Paris"}' },
      { id: 'c3', name: 'wether', arguments: '{}' },
      { id: 'c4', name: 'weather', arguments: '{"city":3}' },
    ] });
    console.log(JSON.stringify(res.results.map((r) => [r.toolCallId, r.output, r.isError]), null, 1));
    expect(res.results[0]!.output).toBe('{"a":1}');
    expect(res.results[1]!.output).toBe('{"temp":21}');
    expect(tools.received[0]!.body).toMatchObject({ tool: 'weather', arguments: { city: 'Paris' }, tool_call_id: 'c2', session_id: 's1', attempt: 1 });
  } finally {
    await d.close();
    await tools.close();
  }
});
