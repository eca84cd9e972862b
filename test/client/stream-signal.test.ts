// CallOptions.signal on the TS client's streams, against a real gRPC server on 127.0.0.1.
import * as grpc from '@grpc/grpc-js';
import { getEventListeners } from 'node:events';
import { createDispatchClient, createWorkerClient } from '../../src/client';
import { startApp, type TestDispatch } from '../helpers/servers';

let d: TestDispatch;
beforeAll(async () => {
  d = await startApp('tools:\n  - name: echo\n    effect: read_only\n    builtin: { name: echo }\n');
});
afterAll(() => d.close());

/** The status a stream ends with, or 'open' if it has not ended within `ms`. */
function ending(stream: grpc.ClientReadableStream<unknown> | grpc.ClientDuplexStream<unknown, unknown>, ms = 2_000): Promise<grpc.StatusObject | 'open'> {
  stream.on('error', () => undefined);
  stream.on('data', () => undefined);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('open'), ms);
    stream.once('status', (status: grpc.StatusObject) => {
      clearTimeout(timer);
      resolve(status);
    });
  });
}

test('aborting the signal cancels a Subscribe stream, and the listener goes with it', async () => {
  const client = createDispatchClient(d.address);
  const controller = new AbortController();
  try {
    const stream = client.subscribe({ sessionId: 'sig' }, { signal: controller.signal });
    await new Promise((resolve) => stream.once('metadata', resolve));
    const ended = ending(stream);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    controller.abort();
    expect(await ended).toMatchObject({ code: grpc.status.CANCELLED });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  } finally {
    client.close();
  }
});

test('aborting the signal cancels a worker\'s Work stream', async () => {
  const client = createWorkerClient(d.address);
  const controller = new AbortController();
  try {
    const stream = client.work({ signal: controller.signal });
    const ended = ending(stream);
    await new Promise((r) => setTimeout(r, 200));
    controller.abort();
    expect(await ended).toMatchObject({ code: grpc.status.CANCELLED });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  } finally {
    client.close();
  }
});

test('a signal aborted already cancels the stream at once', async () => {
  const client = createDispatchClient(d.address);
  try {
    const stream = client.subscribe({ sessionId: 'sig' }, { signal: AbortSignal.abort() });
    expect(await ending(stream)).toMatchObject({ code: grpc.status.CANCELLED });
  } finally {
    client.close();
  }
});

test('a stream that ends by itself leaves no listener on a signal shared by many calls', async () => {
  const client = createDispatchClient(d.address);
  const shared = new AbortController();
  try {
    const streams = [1, 2, 3].map(() => client.subscribe({ sessionId: 'shared' }, { signal: shared.signal, deadlineMs: 300 }));
    const statuses = await Promise.all(streams.map((s) => ending(s)));
    expect(statuses.map((s) => (s === 'open' ? s : s.code))).toEqual([grpc.status.DEADLINE_EXCEEDED, grpc.status.DEADLINE_EXCEEDED, grpc.status.DEADLINE_EXCEEDED]);
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
    await client.dispatch({ sessionId: 'u', calls: [{ id: 'c', name: 'echo', arguments: '{}' }] }, { signal: shared.signal });
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
  } finally {
    client.close();
  }
});
