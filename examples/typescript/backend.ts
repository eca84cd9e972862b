import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { createDispatchClient } from '../../src/client';

/** A tool call as the model emitted it: `arguments` is the raw text, even when broken. */
export interface ModelCall {
  readonly id: string;
  readonly name: string;
  readonly arguments: string;
}

/** The default turn: the built-in echo, the worker-hosted ts_reverse, and a misspelled tool. */
export const DEFAULT_CALLS: readonly ModelCall[] = [
  { id: 'call_1', name: 'echo', arguments: '{"text": "hello from typescript"}' },
  { id: 'call_2', name: 'ts_reverse', arguments: '{"text": "dispatch"}' },
  { id: 'call_3', name: 'ecko', arguments: '{}' },
];

/**
 * Sends one turn's calls to dispatch and returns one line per result, in call order: what the
 * model would read next. `token` is a bearer token when the server requires one.
 */
export async function dispatchTurn(address: string, calls: readonly ModelCall[] = DEFAULT_CALLS, token?: string): Promise<string[]> {
  const client = createDispatchClient(address);
  const metadata = token ? { authorization: `Bearer ${token}` } : undefined;
  const sessionId = `ts-${Date.now().toString(36)}`;
  try {
    const { results } = await client.dispatch({ sessionId, turn: 1, calls: [...calls] }, { metadata, deadlineMs: 60_000 });
    await client.endSession({ sessionId }, { metadata });
    return results.map((r) => `${r.toolCallId} ${r.isError ? `error ${ErrorKind[r.error?.kind ?? 0]}` : 'ok'} tool=${r.resolvedToolName || '-'} attempts=${r.attempts}: ${r.output}`);
  } finally {
    client.close();
  }
}

if (require.main === module) {
  const address = process.argv[2] ?? process.env.DISPATCH_ADDRESS ?? '127.0.0.1:50051';
  const calls = process.argv[3] ? (JSON.parse(process.argv[3]) as ModelCall[]) : DEFAULT_CALLS;
  dispatchTurn(address, calls, process.env.DISPATCH_TOKEN).then(
    (lines) => console.log(lines.join('\n')),
    (error: Error) => {
      console.error(`dispatch failed: ${error.message}`);
      process.exitCode = 1;
    },
  );
}
