import { clientSessionPrototype } from '../../src/server/closing-pings';

// guardClientPings patches Node's ClientHttp2Session.prototype, which every copy of the module in
// a process shares (a bundle beside a dependency; a test runner's module registry per file). Each
// copy wrapped the guard of the copy before it: a chain of wrappers growing with the copies, every
// ping going through all of them, each keeping its copy's module graph alive (a jest worker kept
// every test file's context). Now a copy finds the prototype guarded and leaves it.

type GuardModule = typeof import('../../src/server/closing-pings');

/** A fresh copy of the module, as another bundle or test file would have. */
function freshCopy(): GuardModule {
  let copy: GuardModule | undefined;
  jest.isolateModules(() => {
    copy = jest.requireActual<GuardModule>('../../src/server/closing-pings');
  });
  return copy!;
}

// An earlier test file in this jest worker may have left the prototype guarded (its clients guard
// it for the process and never undo): that guard is set aside for this test and put back after.
let left: PropertyDescriptor | undefined;
beforeAll(() => {
  const proto = clientSessionPrototype();
  left = Object.getOwnPropertyDescriptor(proto, 'ping');
  if (left) delete (proto as { ping?: unknown }).ping;
});
afterAll(() => {
  if (left) Object.defineProperty(clientSessionPrototype(), 'ping', left);
});

test('a second copy of the module finds the client sessions guarded and does not wrap the guard again', () => {
  const proto = clientSessionPrototype();
  const own = (): boolean => Object.prototype.hasOwnProperty.call(proto, 'ping');
  expect(own()).toBe(false);
  const undoFirst = freshCopy().guardClientPings();
  const guard = proto.ping;
  expect(own()).toBe(true);
  const undoSecond = freshCopy().guardClientPings();
  expect(proto.ping).toBe(guard);
  // Either copy's undo restores Node's own ping; the other's is then a no-op.
  undoSecond();
  expect(own()).toBe(false);
  undoFirst();
  expect(own()).toBe(false);
  // A copy guards again after an undo, once.
  const undoThird = freshCopy().guardClientPings();
  const again = proto.ping;
  freshCopy().guardClientPings();
  expect(proto.ping).toBe(again);
  undoThird();
  expect(own()).toBe(false);
});
