// Past the bound, a POST's answer ends with a JSON-RPC error response to its request (the
// stand-in), which the SDK routes to that request alone by id. These units check what the SDK's
// readers get from the cut body: response.json() reads the stand-in alone; the SDK's SSE parser
// (eventsource-parser, as the transport pipes it) sees the events before the cut, then the
// stand-in, and no message event made of the event cut short.
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { ANSWER_TOO_LARGE_CODE, answerTooLargeResponse, boundedResponse, requestIdOf, type Overflow } from '../../src/executors/mcp';

const MAX = 20;
const STAND_IN = answerTooLargeResponse(7, 'too large', MAX);
const encoder = new TextEncoder();

function response(chunks: (string | Uint8Array)[], contentType: string, status = 200): Response {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(typeof chunk === 'string' ? encoder.encode(chunk) : chunk);
      controller.close();
    },
  });
  return new Response(body, { status, headers: { 'content-type': contentType } });
}

const cut = (chunks: (string | Uint8Array)[], contentType: string, overflow: Overflow, status = 200) => {
  let released = 0;
  const bounded = boundedResponse(response(chunks, contentType, status), MAX, () => overflow, () => released++);
  return { bounded, released: () => released };
};

/** The `message` events the SDK would read from an SSE body (it skips events of other types), and the parser's errors. */
async function messages(body: ReadableStream<Uint8Array>): Promise<{ data: string[]; errors: string[] }> {
  const errors: string[] = [];
  const reader = body.pipeThrough(new TextDecoderStream() as unknown as ReadableWritablePair<string, Uint8Array>).pipeThrough(new EventSourceParserStream({ onError: (e) => errors.push(e.message) })).getReader();
  const data: string[] = [];
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    if (!read.value.event || read.value.event === 'message') data.push(read.value.data);
  }
  return { data, errors };
}

const tooLarge = { error: new Error('too large'), standIn: STAND_IN };

describe('an SSE answer cut at the bound', () => {
  it.each([
    ['in the middle of a line', ['data: {"a":1}\n\n', 'data: xxxxx', 'x'.repeat(30)]],
    ['after a line ended by LF', ['data: {"a":1}\n\n', 'data: 12\n', 'data: '.padEnd(30, 'x')]],
    ['after a line ended by CR', ['data: {"a":1}\r\r', 'data: 12\r', 'data: '.padEnd(30, 'x')]],
    ['after a line ended by CRLF', ['data: {"a":1}\r\n\r\n', 'data: 12\r\n', 'data: '.padEnd(30, 'x')]],
    ['after an event', ['data: {"a":1}\n\n', 'data: '.padEnd(30, 'x')]],
    ['after an event type of its own', ['data: {"a":1}\n\nevent: message\n', 'data: '.padEnd(30, 'x')]],
    ['in the middle of a character', ['data: {"a":1}\n\n', new Uint8Array([...encoder.encode('data: '), 0xe2, 0x82]), 'x'.repeat(30)]],
  ])('%s: the SDK reads the events before it, then the stand-in', async (_where, chunks) => {
    const { bounded, released } = cut(chunks, 'text/event-stream', tooLarge);
    expect(await messages(bounded.body!)).toEqual({ data: ['{"a":1}', STAND_IN], errors: [] });
    expect(released()).toBe(1);
  });

  it('within the bound, is handed on as it came', async () => {
    const events = ['data: {"a":1}\n\n', 'data: {"b":2}\n\n'];
    const { bounded, released } = cut(events, 'text/event-stream', tooLarge);
    expect(await bounded.text()).toBe(events.join(''));
    expect(released()).toBe(1);
  });

  it('with no stand-in (the GET stream), fails', async () => {
    const { bounded } = cut(['data: 1\n\n', 'data: '.padEnd(30, 'x')], 'text/event-stream', { error: new Error('an event too large') });
    await expect(bounded.text()).rejects.toThrow('an event too large');
  });
});

describe('a JSON answer cut at the bound', () => {
  it('is replaced whole by the stand-in', async () => {
    const { bounded, released } = cut(['{"jsonrpc":"2.0","id":7,', '"result":"', 'x'.repeat(30), '"}'], 'application/json', tooLarge);
    expect(await bounded.json()).toEqual({ jsonrpc: '2.0', id: 7, error: { code: ANSWER_TOO_LARGE_CODE, message: 'too large', data: expect.objectContaining({ maxBytes: MAX }) } });
    expect(released()).toBe(1);
  });

  it('within the bound, is read as it came', async () => {
    expect(await cut(['{"a":', '1}'], 'application/json', tooLarge).bounded.json()).toEqual({ a: 1 });
  });

  it('with no stand-in, or with an error status, fails', async () => {
    const big = ['{"a":"', 'x'.repeat(30), '"}'];
    await expect(cut(big, 'application/json', { error: new Error('no id') }).bounded.text()).rejects.toThrow('no id');
    await expect(cut(big, 'text/plain', tooLarge, 500).bounded.text()).rejects.toThrow('too large');
  });
});

describe('requestIdOf', () => {
  it.each([
    ['a request', '{"method":"tools/call","params":{},"jsonrpc":"2.0","id":3}', 3],
    ['a request with a string id', '{"method":"ping","jsonrpc":"2.0","id":"a"}', 'a'],
    ['a notification', '{"method":"notifications/cancelled","jsonrpc":"2.0"}', undefined],
    ['a response', '{"result":{},"jsonrpc":"2.0","id":3}', undefined],
    ['a batch', '[{"method":"ping","jsonrpc":"2.0","id":1}]', undefined],
    ['no JSON', 'not json', undefined],
    ['no text', undefined, undefined],
  ])('%s', (_what, body, id) => {
    expect(requestIdOf(body)).toBe(id);
  });
});
