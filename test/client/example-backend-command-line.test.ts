import { commandLine } from '../../examples/typescript/backend';

// Found by following examples/typescript/README.md: `backend.js [ADDRESS] [CALLS_JSON | --text
// TEXT]...` took its first argument for the address whatever it was, so a turn given without an
// address was dialled as a host (`Name resolution failed for target dns:[{"id":"c1"...`) and
// `--text` as one too.

const CALLS = '[{"id":"c1","name":"echo","arguments":"{\\"a\\":1}"}]';

test('the address may be left out before a turn of calls or --text', () => {
  expect(commandLine([CALLS], 'env:1')).toEqual({ address: 'env:1', turns: [[{ id: 'c1', name: 'echo', arguments: '{"a":1}' }]] });
  expect(commandLine(['--text', '<tool_call>x</tool_call>'], 'env:1')).toEqual({ address: 'env:1', turns: [{ text: '<tool_call>x</tool_call>' }] });
});

test('an address first is the address; none at all is the default with no turn', () => {
  expect(commandLine(['127.0.0.1:5000', CALLS, '--text', 'hi'], 'env:1')).toMatchObject({ address: '127.0.0.1:5000', turns: [expect.any(Array), { text: 'hi' }] });
  expect(commandLine([], 'env:1')).toEqual({ address: 'env:1', turns: [] });
});

test('calls that are not JSON are refused with a message', () => {
  expect(() => commandLine(['127.0.0.1:5000', 'not json'], 'env:1')).toThrow(/JSON/);
});
