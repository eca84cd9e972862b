// OpenTelemetry's diag warnings were throttled by their whole text: one naming a header's value or
// a request id was a new entry each time, so every one was logged and the throttle's map grew
// without end. They are now keyed by their shape (values, numbers and hex ids written #), and a
// throttle remembers at most maxKeys.
import { diag } from '@opentelemetry/api';
import { messageShape, throttledWarn, type Logger } from '../../src/log';
import { routeDiagnostics } from '../../src/telemetry/diag-logger';

const lines: string[] = [];
const logger: Logger = { debug() {}, info() {}, warn: (message) => void lines.push(message), error() {} };

beforeEach(() => {
  lines.length = 0;
});

test('diag warnings that differ only in a value or an id are logged once per interval', () => {
  const undo = routeDiagnostics(logger, 60_000);
  try {
    for (let i = 0; i < 50; i++) {
      diag.warn(`Header "x-request-id" has an invalid value "${i}-${i * 7919}"`);
      diag.warn(`Export failed for trace ${(0xabc123 + i).toString(16)}0f1e2d3c4b5a6978: status=${500 + (i % 4)}`);
    }
    diag.warn('a warning of another kind');
  } finally {
    undo();
  }
  expect(lines).toEqual(['opentelemetry: Header "x-request-id" has an invalid value "0-0"', 'opentelemetry: Export failed for trace abc1230f1e2d3c4b5a6978: status=500', 'opentelemetry: a warning of another kind']);
});

test("a message's shape keeps its words and drops what varies", () => {
  expect(messageShape(`can't parse 'x-api-key' value "s3cr3t" at port 4318, id=9f86d081884c7d65`)).toBe("can't parse # value # at port #, id=#");
  expect(messageShape('collector partial success: rejected 12 spans')).toBe('collector partial success: rejected # spans');
});

test('a throttle remembers at most maxKeys messages, forgetting the one logged longest ago', () => {
  const warn = throttledWarn(logger, { intervalMs: 60_000, maxKeys: 2 });
  for (const message of ['a', 'b', 'a', 'c', 'b', 'a']) warn(message);
  // a, b logged; a throttled; c logged (a forgotten: logged longest ago); b throttled; a logged again.
  expect(lines).toEqual(['a', 'b', 'c', 'a']);
});

test('a number as the second argument is still the interval', () => {
  const warn = throttledWarn(logger, 60_000);
  warn('x');
  warn('x');
  expect(lines).toEqual(['x']);
});
