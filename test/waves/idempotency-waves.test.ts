import { DispatchMode, ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startApp, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// Two side-effecting calls of one parallel turn whose idempotency key_fields agree (the same "to",
// another body) ran side by side: the second found the first's claim and failed IN_PROGRESS ("an
// identical call is still running; this one was not executed"), while the sequential mode replays
// the first's result to it. The planner now puts calls sharing an idempotency key in successive
// waves. Through the real app and gRPC, against a real HTTP tool that counts what it runs.

let tools: ToolServer;
let d: TestDispatch;
let sent = 0;
/** Requests the tool server is answering at once, and the most it answered at once. */
let inFlight = 0;
let mostInFlight = 0;
const held = (answer: () => void) => {
  mostInFlight = Math.max(mostInFlight, ++inFlight);
  setTimeout(() => {
    inFlight--;
    answer();
  }, 200);
};

beforeAll(async () => {
  tools = await startToolServer({
    '/send': (_req, res) => {
      sent++;
      held(() => res.writeHead(200).end(`sent ${sent}`));
    },
    '/look': (_req, res) => held(() => res.writeHead(200).end('seen')),
  });
  d = await startApp(`
tools:
  - { name: send, effect: side_effect, concurrency_safe: true, idempotency: { key_fields: ["/to"] }, http: { url: "${tools.url}/send" } }
  - { name: look, effect: read_only, concurrency_safe: true, http: { url: "${tools.url}/look" } }
`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

test('calls sharing an idempotency key run one after the other: the later is replayed, as in sequential mode; other calls still run beside them', async () => {
  const calls = [
    { id: 'a', name: 'send', arguments: '{"to":"bob","body":"hi"}' },
    { id: 'b', name: 'send', arguments: '{"to":"bob","body":"hello"}' },
    { id: 'c', name: 'send', arguments: '{"to":"eve","body":"hi"}' },
    { id: 'd', name: 'look', arguments: '{"q":1}' },
  ];
  mostInFlight = 0;
  const { results } = await d.dispatch.dispatch({ sessionId: 'idem-waves', mode: DispatchMode.PARALLEL, calls });
  expect(results.map((r) => [r.toolCallId, r.isError ? ErrorKind[r.error!.kind] : r.idempotentReplay ? 'replayed' : 'ran'])).toEqual([
    ['a', 'ran'],
    ['b', 'replayed'],
    ['c', 'ran'],
    ['d', 'ran'],
  ]);
  expect(results[1]!.output).toBe(results[0]!.output);
  expect(sent).toBe(2);
  // Two waves: a, c and d together, then b (replayed: the tool is not called). Counted by the tool
  // server rather than timed: a bound of 380 ms on the turn failed on a loaded machine.
  expect(mostInFlight).toBe(3);
});
