import { startDispatch, type TestDispatch } from '../helpers/servers';

let d: TestDispatch;
beforeAll(async () => {
  d = await startDispatch('tools: []\n');
});
afterAll(() => d.close());

test('ParseToolCalls finds Hermes calls, with ids, the remaining text and the format', async () => {
  const text = 'Let me check.\n<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>\n<tool_call>{"name": "get_time", "arguments": {}}</tool_call>';
  const reply = await d.dispatch.parseToolCalls({ text, offeredTools: ['get_weather', 'get_time'] });
  expect(reply.format).toBe('hermes');
  expect(reply.calls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([['get_weather', { city: 'Oslo' }], ['get_time', {}]]);
  expect(reply.calls.every((c) => /^call_[A-Za-z0-9]{24}$/.test(c.id))).toBe(true);
  expect(reply.remainingText).toBe('Let me check.');
});

test('prose naming no offered tool is not a call, and any text is answered', async () => {
  const reply = await d.dispatch.parseToolCalls({ text: 'You could call {"name": "rm_rf", "arguments": {}} but I will not.', offeredTools: ['get_weather'] });
  expect(reply.calls).toEqual([]);
  for (const text of ['', '{'.repeat(10_000), '<tool_call>', '[TOOL_CALLS][{"name":']) {
    await expect(d.dispatch.parseToolCalls({ text })).resolves.toBeDefined();
  }
});

test('calls whose arguments take more than max_response_bytes written as JSON get a clear RESOURCE_EXHAUSTED (found in review)', async () => {
  // A raw control character in a string is read tolerantly and written \u0001: 6x its size.
  const text = `<tool_call>{"name": "save", "arguments": {"data": "${'\u0001'.repeat(1_000_000)}"}}</tool_call>`;
  await expect(d.dispatch.parseToolCalls({ text })).rejects.toMatchObject({
    code: 8,
    details: 'the answer takes 6000066 bytes, over max_response_bytes (4194304): the 1 calls found, written as JSON, and the remaining text (0 characters); send the text in smaller parts',
  });
  // A text a few bytes under the limit with no call comes back whole beside the format: said so (it
  // was "the 0 calls found take ... bytes written as JSON", found by the parse hunt).
  await expect(d.dispatch.parseToolCalls({ text: 'x'.repeat(4 * 1024 * 1024 - 6) })).rejects.toMatchObject({
    code: 8,
    details: 'the answer takes 4194309 bytes, over max_response_bytes (4194304): its remaining text (4194298 characters, no call found); send the text in smaller parts',
  });
  const small = await d.dispatch.parseToolCalls({ text: `<tool_call>{"name": "save", "arguments": {"data": "${'\u0001'.repeat(10)}"}}</tool_call>` });
  expect(JSON.parse(small.calls[0]!.arguments)).toEqual({ data: '\u0001'.repeat(10) });
});
