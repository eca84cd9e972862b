import { status } from '@grpc/grpc-js';
import { startApp } from '../helpers/servers';

// A name the client sent, echoed in an error's message, is shown as other echoed ids are (a
// result handle, a health service): cut without splitting a surrogate pair, its invisible and
// control characters escaped. GetToolStats's NOT_FOUND echoed them raw: ESC sequences, a line that
// reads as the server's own, a bidirectional override reach whoever prints the message.

let d: Awaited<ReturnType<typeof startApp>>;
beforeAll(async () => {
  d = await startApp(`tools:\n  - { name: echo, effect: read_only, input_schema: '{"type":"object"}', builtin: { name: echo } }`);
});
afterAll(() => d.close());

test("GetToolStats's NOT_FOUND escapes the name it echoes", async () => {
  const error = await d.registry.getToolStats({ tool: 'x\u001b]52;c;aGk=\u0007\nERROR forged\u202e' }).then(() => undefined, (e: unknown) => e as { code: number; details: string });
  expect(error).toMatchObject({ code: status.NOT_FOUND });
  expect(error!.details).toBe('tool "x\\u001b]52;c;aGk=\\u0007\\u000aERROR forged\\u202e" is not registered and has no recorded calls');
});

test("GetToolStats's NOT_FOUND cuts a long name without splitting a surrogate pair", async () => {
  const error = await d.registry.getToolStats({ tool: `${'a'.repeat(199)}${'😀'.repeat(9)}` }).then(() => undefined, (e: unknown) => e as { code: number; details: string });
  expect(error).toMatchObject({ code: status.NOT_FOUND });
  // A lone surrogate reaches the client as U+FFFD (the message goes out as UTF-8).
  expect(error!.details).not.toContain('\ufffd');
  expect(error!.details).toMatch(/^tool "a{199}\.{3}" is not registered/);
});
