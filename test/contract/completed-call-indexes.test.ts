import { indexRanges } from '../../src/errors/hard-error';
import { startGuardedApp } from '../guards/helpers';
import { failure } from './error-info';

// A Python agent author's probe: a turn of OpenAI-style call ids (29 characters) stopped
// LOOP_DETECTED after 7 calls had finished, and its ErrorInfo held `calls_completed: 7` and no
// `completed_call_ids` (past 128 characters), so a backend could not tell which side effects had
// run; ids `a,b` and `c` read `a,b,c`, three calls for two. `completed_call_indexes` names their
// places in the request, as ranges, always within 200 characters up to 128 calls; the ids are left
// out when one holds a comma. Read as any client reads it: the real trailer, decoded.

let d: Awaited<ReturnType<typeof startGuardedApp>>;
beforeAll(async () => {
  d = await startGuardedApp(`tools:
  - { name: same, effect: read_only, loop: { warn_threshold: 8, stop_threshold: 8 }, builtin: { name: echo } }
  - { name: echo, effect: read_only, builtin: { name: echo } }
`);
});
afterAll(() => d.close());

const openAiId = (i: number) => `call_${String(i).padStart(24, '0')}`;

test('long ids: the places of the calls that finished, as ranges, where the ids do not fit', async () => {
  const calls = Array.from({ length: 9 }, (_, i) => ({ id: openAiId(i), name: 'same', arguments: '{"q":1}' }));
  const info = await failure(d.dispatch.dispatch({ sessionId: 'long-ids', calls }));
  expect(info.reason).toBe('LOOP_DETECTED');
  expect(info.metadata).toMatchObject({ calls_completed: '8', completed_call_indexes: '0-7', tool_call_id: openAiId(8) });
  expect(info.metadata.completed_call_ids).toBeUndefined();
});

test('an id holding a comma: the places, and no ids to misread', async () => {
  const calls = ['a,b', 'c', ...Array.from({ length: 9 }, (_, i) => `x${i}`)].map((id, i) => ({ id, name: i < 2 ? 'echo' : 'same', arguments: i < 2 ? '{}' : '{"q":2}' }));
  const info = await failure(d.dispatch.dispatch({ sessionId: 'comma-ids', calls }));
  expect(info.metadata).toMatchObject({ calls_completed: '10', completed_call_indexes: '0-9' });
  expect(info.metadata.completed_call_ids).toBeUndefined();
});

test('places as ranges: runs joined, alone kept; 64 alternate places of 128 within 200 characters', () => {
  expect(indexRanges([0, 1, 2, 5, 7, 8])).toBe('0-2,5,7-8');
  expect(indexRanges([3])).toBe('3');
  expect(indexRanges([])).toBe('');
  const alternate = indexRanges(Array.from({ length: 64 }, (_, i) => 2 * i + 1));
  expect(alternate.startsWith('1,3,5')).toBe(true);
  expect(alternate.length).toBeLessThanOrEqual(200);
});
