// The memory of worker ids that dropped their streams just after large assignments: blame needs two
// drops within DROP_WINDOW_MS, and the lowered limit lasts CAP_MS, or until a hello states more.
import { CAP_MS, createReceiveMemory, DROP_WINDOW_MS, GRPC_DEFAULT_RECEIVE_BYTES, type ReceiveFailure } from '../../src/executors/worker/receive-failures';
import type { ReceiveLimit, WorkerLink } from '../../src/executors/worker/worker-link';

const MiB = 1024 * 1024;
const said = (bytes: number): ReceiveLimit => ({ bytes, from: 'hello' });
const link = { tenant: 't', workerId: 'w' } as WorkerLink;
const failure: ReceiveFailure = { assignmentId: 'a', bytes: 5 * MiB, limit: said(64 * MiB) };

test('one drop blames nothing; two within the window do; two further apart do not', () => {
  let now = 1_000_000;
  const memory = createReceiveMemory(() => now);
  expect(memory.dropped(link, failure)).toBe(false);
  now += DROP_WINDOW_MS + 1;
  expect(memory.dropped(link, failure)).toBe(false);
  expect(memory.lowered('t', 'w', said(64 * MiB))).toBeUndefined();
  now += DROP_WINDOW_MS;
  expect(memory.dropped(link, failure)).toBe(true);
  expect(memory.lowered('t', 'w', said(64 * MiB))).toEqual({ bytes: GRPC_DEFAULT_RECEIVE_BYTES, from: 'dropped', said: 64 * MiB, dropped: 5 * MiB, until: now + CAP_MS });
  expect(memory.lowered('t', 'other', said(64 * MiB))).toBeUndefined();
});

test('the lowered limit expires CAP_MS after the blame', () => {
  let now = 1_000_000;
  const memory = createReceiveMemory(() => now);
  memory.dropped(link, failure);
  memory.dropped(link, failure);
  now += CAP_MS - 1;
  expect(memory.lowered('t', 'w', said(64 * MiB))?.bytes).toBe(GRPC_DEFAULT_RECEIVE_BYTES);
  now += 1;
  expect(memory.lowered('t', 'w', said(64 * MiB))).toBeUndefined();
});

test('a hello stating less is believed and the blame stays; one stating more clears it', () => {
  const memory = createReceiveMemory(() => 1_000_000);
  memory.dropped(link, failure);
  memory.dropped(link, failure);
  expect(memory.lowered('t', 'w', said(5 * MiB))).toBeUndefined();
  expect(memory.lowered('t', 'w', said(64 * MiB))?.from).toBe('dropped');
  expect(memory.lowered('t', 'w', said(128 * MiB))).toBeUndefined();
  expect(memory.lowered('t', 'w', said(64 * MiB))).toBeUndefined();
});
