import * as grpc from '@grpc/grpc-js';
import { EventKind, type Event } from '../../gen/dispatch/v1/dispatch_pb';
import { createDispatchClient } from '../client';
import { formatEvent } from '../events';
import { delay } from '../pipeline/signals';

/** What `dispatchctl events` tails. */
export interface EventsFilter {
  readonly session?: string;
  readonly tool?: string;
  /** Event kinds by name, `TOOL_POST` or `tool_post`; empty means all. */
  readonly kinds?: readonly string[];
  /** A bearer token (the `subscribe` scope). */
  readonly token?: string;
}

type Out = (line: string) => void;

/** The EventKind of a name; undefined when it names none. */
export function kindOf(name: string): EventKind | undefined {
  const key = name.trim().toUpperCase().replace(/^EVENT_KIND_/, '') as keyof typeof EventKind;
  const kind = EventKind[key];
  return typeof kind === 'number' && kind !== EventKind.UNSPECIFIED ? kind : undefined;
}

/** How one Subscribe stream ended. */
type Ending = { readonly by: 'signal' } | { readonly by: 'server' } | { readonly by: 'error'; readonly error: grpc.ServiceError };

/** Stream failures that `--follow` waits out: the server away or going away. */
const PASSING = new Set([grpc.status.UNAVAILABLE, grpc.status.INTERNAL, grpc.status.UNKNOWN]);

/** How long `--follow` waits before subscribing again: drawn at random up to a bound that doubles from this... */
const FIRST_BACKOFF_MS = 500;
/** ...to this. */
const MAX_BACKOFF_MS = 10_000;

/** Prints `client`'s events on one Subscribe stream until it ends, or `signal` fires. */
function tail(client: ReturnType<typeof createDispatchClient>, filter: EventsFilter, kinds: EventKind[], out: Out, signal: AbortSignal): Promise<Ending> {
  const stream = client.subscribe(
    { sessionId: filter.session ?? '', tools: filter.tool ? [filter.tool] : [], kinds },
    { metadata: filter.token ? { authorization: `Bearer ${filter.token}` } : {} },
  );
  const cancel = () => stream.cancel();
  signal.addEventListener('abort', cancel, { once: true });
  return new Promise<Ending>((resolve) => {
    stream.on('data', (event: Event) => out(formatEvent(event)));
    stream.on('error', (error: grpc.ServiceError) => resolve(signal.aborted && error.code === grpc.status.CANCELLED ? { by: 'signal' } : { by: 'error', error }));
    stream.on('end', () => resolve(signal.aborted ? { by: 'signal' } : { by: 'server' }));
  }).finally(() => signal.removeEventListener('abort', cancel));
}

/**
 * `dispatchctl events`: subscribes and prints one line per event until `signal` fires (exit 0),
 * the server ends the stream (exit 0) or the RPC fails (exit 1, the status on `err`). With
 * `follow`, a stream the server ended or that failed because the server was away or going away
 * (UNAVAILABLE: a restart, a rolling update) is opened again after a random wait up to a bound
 * doubling from 0.5 s to 10 s, with a line on `err`; events meanwhile are not shown.
 * `credentials`: the channel's (TLS), insecure unless given.
 */
export async function eventsCommand(
  address: string,
  filter: EventsFilter & { readonly follow?: boolean; readonly credentials?: grpc.ChannelCredentials },
  out: Out,
  signal: AbortSignal,
  err: Out = (line) => process.stderr.write(`${line}\n`),
): Promise<number> {
  const kinds: EventKind[] = [];
  for (const name of filter.kinds ?? []) {
    const kind = kindOf(name);
    if (kind === undefined) {
      err(`dispatchctl: unknown event kind "${name}" (one of ${Object.keys(EventKind).filter((k) => Number.isNaN(Number(k)) && k !== 'UNSPECIFIED').join(', ')})`);
      return 2;
    }
    kinds.push(kind);
  }
  for (let bound = FIRST_BACKOFF_MS; !signal.aborted; bound = Math.min(MAX_BACKOFF_MS, bound * 2)) {
    const opened = Date.now();
    // A channel per stream: the wait between streams is this loop's, not the channel's reconnection backoff.
    const client = createDispatchClient(address, filter.credentials);
    const ending = await tail(client, filter, kinds, out, signal).finally(() => client.close());
    if (ending.by === 'signal') return 0;
    const why = ending.by === 'server' ? 'the server ended the stream' : `${grpc.status[ending.error.code] ?? ending.error.code}: ${ending.error.details ?? ending.error.message}`;
    if (!filter.follow || (ending.by === 'error' && !PASSING.has(ending.error.code))) {
      if (ending.by === 'server') return 0;
      err(`dispatchctl: ${why}`);
      return 1;
    }
    if (Date.now() - opened >= 60_000) bound = FIRST_BACKOFF_MS;
    const wait = Math.round(Math.random() * bound);
    err(`dispatchctl: ${why}; subscribing again in ${wait} ms (events meanwhile are not shown)`);
    // Ends early on Ctrl-C; the loop then returns 0.
    await delay(wait, signal).catch(() => undefined);
  }
  return 0;
}
