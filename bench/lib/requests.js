'use strict';
const path = require('node:path');
const { create, toBinary, fromBinary } = require('@bufbuild/protobuf');

const dist = path.join(__dirname, '..', '..', 'dist');
const pb = require(path.join(dist, 'gen', 'dispatch', 'v1', 'dispatch_pb.js'));

/** The gRPC path of Dispatch. */
const DISPATCH_PATH = '/dispatch.v1.DispatchService/Dispatch';
const COUNTER = '000000000';
const SESSION = 'bench-00';
/** Sessions the benchmark spreads its calls over (each keeps its own loop window). @default 64 */
const SESSIONS = 64;

/**
 * Dispatch requests of `calls` echo calls as pre-encoded bytes, each with a fresh counter in its
 * arguments and session, so no two calls share arguments (no loop detection, no memoized
 * replay) without re-encoding: the template is encoded once and the counter digits are patched
 * in place. `next()` returns the next request's bytes.
 */
function dispatchRequests({ calls = 1, mode = 'sequential', tool = 'echo' } = {}) {
  const request = create(pb.DispatchRequestSchema, {
    sessionId: SESSION,
    mode: mode === 'parallel' ? pb.DispatchMode.PARALLEL : pb.DispatchMode.SEQUENTIAL,
    calls: Array.from({ length: calls }, (_, i) => ({ id: `call_${i}`, name: tool, arguments: JSON.stringify({ text: 'hello, dispatch', n: COUNTER, i }) })),
  });
  const template = Buffer.from(toBinary(pb.DispatchRequestSchema, request));
  const counterAt = offsetsOf(template, COUNTER);
  const sessionAt = offsetsOf(template, SESSION)[0];
  let n = 0;
  return {
    size: template.length,
    next() {
      const bytes = Buffer.from(template);
      const digits = String(++n).padStart(COUNTER.length, '0');
      for (const at of counterAt) bytes.write(digits, at, 'latin1');
      bytes.write(String(n % SESSIONS).padStart(2, '0'), sessionAt + SESSION.length - 2, 'latin1');
      return bytes;
    },
  };
}

function offsetsOf(buffer, text) {
  const out = [];
  for (let at = buffer.indexOf(text); at !== -1; at = buffer.indexOf(text, at + 1)) out.push(at);
  return out;
}

/** Decodes a DispatchResponse (to check what the server answered). */
const decodeResponse = (bytes) => fromBinary(pb.DispatchResponseSchema, bytes);

module.exports = { DISPATCH_PATH, dispatchRequests, decodeResponse };
