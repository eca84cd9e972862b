import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { RAN_UNREAD, suggestionFor } from '../../src/errors';

// The suggestion is chosen from the kind, the phase and the tool's effect, never from the message.

test('UNEXPECTED after a side-effecting tool ran says it took effect; any other combination keeps the kind\'s default', () => {
  const plain = suggestionFor(ErrorKind.UNEXPECTED);
  expect(suggestionFor(ErrorKind.UNEXPECTED, { phase: 'after', readOnly: false })).toBe(RAN_UNREAD);
  expect(suggestionFor(ErrorKind.UNEXPECTED, { phase: 'after', readOnly: true })).toBe(plain);
  expect(suggestionFor(ErrorKind.UNEXPECTED, { phase: 'during', readOnly: false })).toBe(plain);
  expect(suggestionFor(ErrorKind.UNEXPECTED, { phase: 'before', readOnly: false })).toBe(plain);
  expect(suggestionFor(ErrorKind.TOOL_ERROR, { phase: 'after', readOnly: false })).toBe(suggestionFor(ErrorKind.TOOL_ERROR));
});
