import * as grpc from '@grpc/grpc-js';
import { EventKind, type Event } from '../../gen/dispatch/v1/dispatch_pb';
import { createDispatchClient } from '../client';
import { formatEvent } from '../events';

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

/**
 * `dispatchctl events`: subscribes and prints one line per event until `signal` fires (exit 0),
 * the server ends the stream (exit 0) or the RPC fails (exit 1, the status on `err`).
 */
export async function eventsCommand(address: string, filter: EventsFilter, out: Out, signal: AbortSignal, err: Out = (line) => process.stderr.write(`${line}\n`)): Promise<number> {
  const kinds: EventKind[] = [];
  for (const name of filter.kinds ?? []) {
    const kind = kindOf(name);
    if (kind === undefined) {
      err(`dispatchctl: unknown event kind "${name}" (one of ${Object.keys(EventKind).filter((k) => Number.isNaN(Number(k)) && k !== 'UNSPECIFIED').join(', ')})`);
      return 2;
    }
    kinds.push(kind);
  }
  if (signal.aborted) return 0;
  const client = createDispatchClient(address);
  try {
    const stream = client.subscribe(
      { sessionId: filter.session ?? '', tools: filter.tool ? [filter.tool] : [], kinds },
      { metadata: filter.token ? { authorization: `Bearer ${filter.token}` } : {} },
    );
    const cancel = () => stream.cancel();
    signal.addEventListener('abort', cancel, { once: true });
    try {
      return await new Promise<number>((resolve) => {
        stream.on('data', (event: Event) => out(formatEvent(event)));
        stream.on('error', (error: grpc.ServiceError) => {
          if (signal.aborted && error.code === grpc.status.CANCELLED) return resolve(0);
          err(`dispatchctl: ${grpc.status[error.code] ?? error.code}: ${error.details ?? error.message}`);
          resolve(1);
        });
        stream.on('end', () => resolve(0));
      });
    } finally {
      signal.removeEventListener('abort', cancel);
    }
  } finally {
    client.close();
  }
}
