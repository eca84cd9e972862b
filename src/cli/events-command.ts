import * as grpc from '@grpc/grpc-js';
import { EventKind, type Event } from '../../gen/dispatch/v1/dispatch_pb';
import { createDispatchClient } from '../client';
import { formatEvent } from '../events/format-event';
import { terminalText } from '../events/terminal-text';
import { delay } from '../pipeline/signals';
import { connectionHint, DEFAULT_TIMEOUT_SECONDS } from './dispatchctl-connection';
import { statusDetails } from './status-reason';

/** What `dispatchctl events` tails. */
export interface EventsFilter {
  readonly session?: string;
  /**
   * The tools whose events to show, one or several; none means all. The empty name stands for the
   * events with no tool (TURN_END), as Subscribe's `tools` reads it: it was dropped, so `--tool T
   * --tool ""` never showed a turn's end, as the README says it does.
   */
  readonly tool?: string | readonly string[];
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

/** Stream failures that `--follow` waits out: the server away or going away, or not answering (the start deadline). */
const PASSING = new Set([grpc.status.UNAVAILABLE, grpc.status.INTERNAL, grpc.status.UNKNOWN, grpc.status.DEADLINE_EXCEEDED]);

/** How long `--follow` waits before subscribing again: drawn at random up to a bound that doubles from this... */
const FIRST_BACKOFF_MS = 500;
/** ...to this. */
const MAX_BACKOFF_MS = 10_000;

/**
 * Prints `client`'s events on one Subscribe stream until it ends, or `signal` fires. A stream
 * whose server has not answered (its headers, which dispatchd sends once subscribed) within
 * `startMs` is cancelled and ends DEADLINE_EXCEEDED: an endpoint that takes the connection and
 * never answers would otherwise hold it forever, Subscribe having no deadline.
 */
function tail(client: ReturnType<typeof createDispatchClient>, filter: EventsFilter, kinds: EventKind[], out: Out, signal: AbortSignal, startMs: number): Promise<Ending> {
  const stream = client.subscribe(
    { sessionId: filter.session ?? '', tools: [filter.tool ?? []].flat(), kinds },
    { metadata: filter.token ? { authorization: `Bearer ${filter.token}` } : {} },
  );
  const cancel = () => stream.cancel();
  signal.addEventListener('abort', cancel, { once: true });
  let unanswered = false;
  const timer = setTimeout(() => {
    unanswered = true;
    stream.cancel();
  }, startMs);
  stream.once('metadata', () => clearTimeout(timer));
  return new Promise<Ending>((resolve) => {
    stream.on('data', (event: Event) => out(formatEvent(event)));
    stream.on('error', (error: grpc.ServiceError) => {
      if (signal.aborted && error.code === grpc.status.CANCELLED) resolve({ by: 'signal' });
      else if (unanswered) resolve({ by: 'error', error: Object.assign(new Error('no answer'), { code: grpc.status.DEADLINE_EXCEEDED, details: `no answer within ${startMs / 1000} s (--timeout)`, metadata: new grpc.Metadata() }) });
      else resolve({ by: 'error', error });
    });
    stream.on('end', () => resolve(signal.aborted ? { by: 'signal' } : { by: 'server' }));
  }).finally(() => {
    clearTimeout(timer);
    signal.removeEventListener('abort', cancel);
  });
}

/**
 * `dispatchctl events`: subscribes and prints one line per event until `signal` fires (exit 0),
 * the server ends the stream (it drains or shuts down: exit 1, said on `err`) or the RPC fails
 * (exit 1, the status on `err`; DEADLINE_EXCEEDED when the server has not answered within
 * `startTimeoutMs`, default DEFAULT_TIMEOUT_SECONDS). With
 * `follow`, a stream the server ended or that failed because the server was away or going away
 * (UNAVAILABLE: a restart, a rolling update) is opened again after a random wait up to a bound
 * doubling from 0.5 s to 10 s, with a line on `err`; events meanwhile are not shown (a server
 * that did not answer in time too).
 * `credentials`: the channel's (TLS), insecure unless given.
 */
export async function eventsCommand(
  address: string,
  filter: EventsFilter & { readonly follow?: boolean; readonly credentials?: grpc.ChannelCredentials; readonly tls?: boolean; readonly startTimeoutMs?: number },
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
    const ending = await tail(client, filter, kinds, out, signal, filter.startTimeoutMs ?? DEFAULT_TIMEOUT_SECONDS * 1000).finally(() => client.close());
    if (ending.by === 'signal') return 0;
    const why =
      ending.by === 'server' ? 'the server ended the stream' : `${grpc.status[ending.error.code] ?? ending.error.code}: ${terminalText(statusDetails(ending.error.details ?? ending.error.message))}`;
    if (!filter.follow || (ending.by === 'error' && !PASSING.has(ending.error.code))) {
      err(`dispatchctl: ${why}${ending.by === 'server' ? ' (it is draining or shutting down; --follow subscribes again)' : connectionHint(ending.error, filter.tls ?? false)}`);
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
