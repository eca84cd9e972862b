import { status as Status, type ServiceError } from '@grpc/grpc-js';
import { DispatchService, ErrorKind, type ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { createDispatchClient, errorReason } from '../../src/client';

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

const retry = (codes: string[]) => ({ maxAttempts: 4, initialBackoff: '0.5s', maxBackoff: '4s', backoffMultiplier: 2, retryableStatusCodes: codes });
const methods = (...names: string[]) => names.map((method) => ({ service: DispatchService.typeName, method }));
/**
 * gRPC's standard retry (a service config): a call dispatchd refused UNAVAILABLE (SHUTTING_DOWN, a
 * rolling update) or RESOURCE_EXHAUSTED (OVERLOADED: nothing run) is sent again as it was: in the
 * same session_id with the same arguments, a side-effecting call that did run is replayed from its
 * idempotency record, not run twice (a tool_call_id is no part of the key). At most 4 attempts
 * within the call's deadline. ParseToolCalls' RESOURCE_EXHAUSTED (an answer too large) would come
 * again: only UNAVAILABLE is retried there.
 */
export const RETRY_SERVICE_CONFIG = JSON.stringify({
  methodConfig: [
    { name: methods('Dispatch', 'ReadResult'), retryPolicy: retry(['UNAVAILABLE', 'RESOURCE_EXHAUSTED']) },
    { name: methods('ParseToolCalls', 'EndSession'), retryPolicy: retry(['UNAVAILABLE']) },
  ],
});
/** The longest wait a soft error's retry_after_ms may put before the next turn. */
const MAX_PAUSE_MS = 60_000;
/**
 * What a result answered from dispatch's records says (idempotent_replay: a side-effecting call
 * with the same key arguments completed earlier in the session; cached: a read-only tool's
 * memoized answer). The tool_call_id is no part of the key: a new one is replayed all the same.
 */
export const REPLAYED = '  replayed: the result of an earlier call in this session with the same key arguments; the tool did not run again';
export const CACHED = "  cached: a read-only tool's remembered answer (memoize); the tool did not run again";
/** ReadResult pages read of one truncated result. */
const MAX_PAGES = 64;

/** A --calls turn checked: a message naming what is wrong, not a TypeError later. */
export function parseCalls(text: string): ModelCall[] {
  let calls: unknown;
  try {
    calls = JSON.parse(text);
  } catch (error) {
    throw new Error(`calls are not JSON (${(error as Error).message})`);
  }
  if (!Array.isArray(calls)) throw new Error('calls must be a JSON list of {"id", "name", "arguments"}');
  calls.forEach((call: unknown, i) => {
    const fields = typeof call === 'object' && call !== null ? (call as Record<string, unknown>) : {};
    const bad = ['id', 'name', 'arguments'].filter((f) => typeof fields[f] !== 'string');
    if (bad.length > 0) throw new Error(`call ${i} needs ${bad.join(', ')} as strings (arguments is the JSON text the model emitted), got ${JSON.stringify(call)?.slice(0, 200)}`);
  });
  return calls as ModelCall[];
}

/** A hard error as a line: `ABORTED LOOP_DETECTED: loop detected...`. */
export const describeHardError = (error: ServiceError) => `${Status[error.code] ?? error.code}${errorReason(error) ? ` ${errorReason(error)}` : ''}: ${error.details}`;

/** One dispatch session, turn after turn: what an agent keeps for a conversation. */
export interface Conversation {
  readonly sessionId: string;
  /** Dispatches a turn; gives one line per result (and its warnings, truncation, retry hint). */
  turn(calls: readonly ModelCall[]): Promise<string[]>;
  /** The tool calls dispatch finds in a model's text (ParseToolCalls). */
  parse(text: string): Promise<ModelCall[]>;
  /** Ends the session (once, when the conversation ends) and closes the channel. */
  end(): Promise<void>;
}

/**
 * Opens a conversation: its turns share one session, which is what lets dispatch see a loop
 * across turns and replay a side effect sent again; end it when the conversation ends, not per
 * turn. `token` is a bearer token when the server requires one.
 */
export function openConversation(address: string, token?: string, sessionId = `ts-${Date.now().toString(36)}`): Conversation {
  const client = createDispatchClient(address, undefined, { 'grpc.service_config': RETRY_SERVICE_CONFIG });
  const metadata = token ? { authorization: `Bearer ${token}` } : undefined;
  let turns = 0;
  let pauseMs = 0;

  async function readWhole(resultHandle: string): Promise<string> {
    let text = '';
    for (let offset = 0, page = 0; page < MAX_PAGES; page++) {
      const read = await client.readResult({ resultHandle, offset, limit: 65_536 }, { metadata, deadlineMs: 30_000 });
      text += read.text;
      if (read.nextOffset >= read.totalChars || read.text === '') break;
      offset = read.nextOffset;
    }
    return text;
  }

  async function show(r: ToolResult, lines: string[]): Promise<number> {
    lines.push(`${r.toolCallId} ${r.isError ? `error ${ErrorKind[r.error?.kind ?? 0]}` : 'ok'} tool=${r.resolvedToolName || '-'} attempts=${r.attempts}: ${r.output}`);
    for (const warning of r.warnings) lines.push(`  warning: ${warning}`);
    // The tool did not run: worth telling the model, which may have meant to act again.
    if (r.idempotentReplay) lines.push(REPLAYED);
    else if (r.cached) lines.push(CACHED);
    if (r.truncated && r.resultHandle) lines.push(`  truncated: ${[...(await readWhole(r.resultHandle))].length} characters in all, read with ReadResult`);
    if (!r.isError || !r.error?.recoverable || !r.error.retryAfterMs) return 0;
    lines.push(`  retry_after_ms: ${r.error.retryAfterMs}`);
    return Math.min(r.error.retryAfterMs, MAX_PAUSE_MS);
  }

  return {
    sessionId,
    async turn(calls) {
      const lines: string[] = [];
      // A call refused with retry_after_ms would be refused again sooner: the next turn waits.
      if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
      const { results } = await client.dispatch({ sessionId, turn: ++turns, calls: [...calls] }, { metadata, deadlineMs: 60_000 });
      pauseMs = 0;
      for (const r of results) pauseMs = Math.max(pauseMs, await show(r, lines));
      return lines;
    },
    async parse(text) {
      const { calls } = await client.parseToolCalls({ text }, { metadata, deadlineMs: 30_000 });
      return calls.map(({ id, name, arguments: args }) => ({ id, name, arguments: args }));
    },
    async end() {
      try {
        await client.endSession({ sessionId }, { metadata, deadlineMs: 10_000 });
      } finally {
        client.close();
      }
    },
  };
}

/** Turns of a conversation: calls, or a model's text to parse for them. */
export type Turn = readonly ModelCall[] | { readonly text: string };

/**
 * Runs `turns` in one conversation and returns the lines the model would read, with `-- turn N`
 * before each when there are several, each also given to `print` as it comes; the session is ended
 * once, after the last turn (or a hard error, which rejects).
 */
export async function runConversation(address: string, turns: readonly Turn[], token?: string, print: (line: string) => void = () => undefined): Promise<string[]> {
  const conversation = openConversation(address, token);
  const lines: string[] = [];
  const add = (line: string) => (lines.push(line), print(line));
  try {
    for (const [i, turn] of turns.entries()) {
      if (turns.length > 1) add(`-- turn ${i + 1}`);
      (await conversation.turn('text' in turn ? await conversation.parse(turn.text) : turn)).forEach(add);
    }
    return lines;
  } finally {
    await conversation.end().catch(() => undefined);
  }
}

/**
 * The address and token from DISPATCH_ADDRESS and DISPATCH_TOKEN, as dispatchctl and the Python
 * examples read them: an empty variable counts as unset, and the token is trimmed (a newline left
 * by a secret file or `echo`; grpc-js refuses a header holding one).
 */
export function settingsFrom(env: NodeJS.ProcessEnv): { address: string; token: string | undefined } {
  return { address: env.DISPATCH_ADDRESS || '127.0.0.1:50051', token: env.DISPATCH_TOKEN?.trim() || undefined };
}

/**
 * The address and turns of a command line (`[ADDRESS] [CALLS_JSON | --text TEXT]...`): the address
 * may be left out, a first argument that is a flag or JSON being a turn's.
 */
export function commandLine(args: readonly string[], defaultAddress: string): { address: string; turns: Turn[] } {
  const rest = [...args];
  const address = rest[0] !== undefined && !rest[0].startsWith('-') && !/^\s*[[{]/.test(rest[0]) ? rest.shift()! : defaultAddress;
  const turns: Turn[] = [];
  for (let i = 0; i < rest.length; i++) turns.push(rest[i] === '--text' ? { text: rest[++i] ?? '' } : parseCalls(rest[i]!));
  return { address, turns };
}

/** One turn in a conversation of its own. */
export const dispatchTurn = (address: string, calls: readonly ModelCall[] = DEFAULT_CALLS, token?: string) => runConversation(address, [calls], token);

if (require.main === module) {
  const settings = settingsFrom(process.env);
  const args = process.argv.slice(2);
  if (args[0] === '--help' || args[0] === '-h') {
    console.log('usage: backend.js [ADDRESS] [CALLS_JSON | --text TEXT]...  (ADDRESS defaults to DISPATCH_ADDRESS, else 127.0.0.1:50051)');
    process.exit(0);
  }
  let address: string;
  let turns: Turn[];
  try {
    ({ address, turns } = commandLine(args, settings.address));
  } catch (error) {
    console.error(`backend: ${(error as Error).message}`);
    process.exit(2);
  }
  runConversation(address, turns.length > 0 ? turns : [DEFAULT_CALLS], settings.token, (line) => console.log(line)).catch(
    (error: ServiceError) => {
      console.error(`dispatch failed: ${error.code === undefined ? error.message : describeHardError(error)}`);
      process.exitCode = 1;
    },
  );
}
