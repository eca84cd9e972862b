import { EventKind } from '../../gen/dispatch/v1/dispatch_pb';
import { formatEvent } from '../../src/events/format-event';
import { startApp } from '../helpers/servers';
import { tapEvents } from './event-tap';

// Found by a probe of observability: a call a policy blocked showed operators outcome=BLOCKED and
// nothing of which policy: the reason reached only the model. TOOL_POST (and the attempt's span)
// now name the rule that blocked it: its name, else its place in the file.

test('a blocked attempt names the policy rule that blocked it', async () => {
  const d = await startApp(`
tools:
  - { name: pay, effect: read_only, input_schema: '{"type":"object"}', builtin: { name: echo } }
  - { name: wipe, effect: read_only, input_schema: '{"type":"object"}', builtin: { name: echo } }
policies:
  - { name: big-payments, match: pay, decide: block, reason: "needs a human" }
  - { match: wipe, decide: block, reason: "never" }
`);
  const tap = await tapEvents(d.address, { sessionId: 's' });
  try {
    await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'p', name: 'pay', arguments: '{}' }, { id: 'w', name: 'wipe', arguments: '{}' }] });
    await tap.waitFor((events) => events.some((e) => e.kind === EventKind.TURN_END));
    const posts = tap.events.filter((e) => e.kind === EventKind.TOOL_POST);
    expect(posts.map((e) => [e.attributes['dispatch.outcome'], e.attributes['dispatch.policy']])).toEqual([
      ['BLOCKED', 'big-payments'],
      ['BLOCKED', 'policies[1]'],
    ]);
    expect(formatEvent(posts[0]!)).toMatch(/ call=p tool=pay attempt=1 outcome=BLOCKED policy=big-payments phase=before ms=/);
  } finally {
    tap.close();
    await d.close();
  }
});
