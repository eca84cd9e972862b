import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { allPages, createDispatchClient, createRegistryClient, type CallOptions } from '../client';
import { eventsCommand } from './events-command';
import { formatResult } from './format-result';
import { parseConfig } from '../config';
import { terminalText, terminalWord } from '../events';
import { formatStats } from './format-stats';
import { approvalsCommand } from './approvals-command';
import { parseCommand } from './parse-command';
import { connectionHint, DEFAULT_TIMEOUT_SECONDS, resolveConnection, type Connection } from './dispatchctl-connection';
import { readTurnFile } from './turn-file';
import { uint32Argument, UsageError } from './usage';

const USAGE = `usage: dispatchctl [--address HOST:PORT] [--token T] [--session S] [--timeout SECONDS]
                   [--tls] [--tls-ca FILE] [--tls-cert FILE --tls-key FILE] COMMAND
  tools list                 the tools dispatch can call
  tools register FILE        register the tools of a YAML file (its \`tools:\` list, as in the
                             config file); --replace replaces tools of the same name
  tools remove NAME          remove a tool registered by RPC
  stats [TOOL]               calls, breaker, health and the six rates per tool, with alerts
  call TOOL JSON             dispatch one call, e.g. call echo '{"a":1}'
  dispatch FILE              dispatch a turn: {"session_id","calls":[{"id","name","arguments"}],"mode"} (mode: parallel or sequential;
                             also "interactive": true, an ask policy's call waiting for approval, and "offered_tools")
  read HANDLE [OFFSET]       the whole text of a truncated result
  end-session SESSION        clear a session's records, results and scratch directory
  approvals [list] [--tool T]
                             the calls waiting for approval, with the arguments that run
                             if approved; --session and --tool filter
  approvals resolve ID --approve|--deny [--reason R]
                             decide a waiting call (its ID as approvals lists it): approved,
                             it runs; denied, it is refused BLOCKED and the model reads R;
                             both show R in the APPROVAL_RESOLVED event;
                             exit 1 if it was not waiting
  parse FILE                 find tool calls in raw model output ('-' reads stdin)
  events [--tool T] [--kind K]... [--follow]
                             tail events live, one line each; --session, --tool and --kind
                             (tool_post, RETRY, ...; repeatable) filter; --follow subscribes
                             again when the server restarts or goes away; Ctrl-C stops
  --address HOST:PORT        the server ([::1]:PORT for IPv6, or unix:PATH); the port is required
  --session S                the session of call and dispatch (a turn file's session_id wins);
                             default cli-<pid>, a new session each run, so a side-effecting
                             call run again runs again: retry with the same --session (its
                             idempotency record, kept per session, then replays the result)
  --timeout SECONDS          each call's deadline, and how long events waits for the server to
                             answer (default ${DEFAULT_TIMEOUT_SECONDS})
  --tls                      TLS, the server checked against the system's CAs
  --tls-ca FILE              TLS, the server checked against this CA bundle (PEM)
  --tls-cert F --tls-key F   present this client certificate (mutual TLS; TLS is then on)
  --allow-plaintext-token    send the token without TLS to an address beyond loopback
                             (refused otherwise; for a connection protected another way)
  environment: DISPATCH_ADDRESS (default 127.0.0.1:50051), DISPATCH_TOKEN, DISPATCH_TLS_CA,
               DISPATCH_TLS_CERT, DISPATCH_TLS_KEY (an empty one counts as unset)
  exit codes: 0; 1 an RPC failed (the status on stderr), events' stream ended by the server, or
              the approval approvals resolve named was not waiting;
              2 a usage error; 3 call or dispatch ran and a result is an error (UNKNOWN_TOOL, ...)
  what a client, a model or a tool wrote is shown with control, bidi and invisible characters
  escaped (\\u001b); names and ids with whitespace or escapes are quoted`;

const FLAGS = {
  address: { type: 'string' },
  token: { type: 'string' },
  timeout: { type: 'string' },
  tls: { type: 'boolean' },
  'tls-ca': { type: 'string' },
  'tls-cert': { type: 'string' },
  'tls-key': { type: 'string' },
  'allow-plaintext-token': { type: 'boolean' },
  session: { type: 'string' },
  tool: { type: 'string' },
  kind: { type: 'string', multiple: true },
  follow: { type: 'boolean', short: 'f' },
  parallel: { type: 'boolean' },
  replace: { type: 'boolean' },
  approve: { type: 'boolean' },
  deny: { type: 'boolean' },
  reason: { type: 'string' },
  help: { type: 'boolean' },
} as const;

type Out = (line: string) => void;

/** The exit code of `call` and `dispatch` when the turn ran and any result is an error (INVALID_ARGUMENTS, UNKNOWN_TOOL, ...). */
export const RESULT_ERROR = 3;

/** Runs one dispatchctl command; resolves with the exit code (non-zero on a hard error). */
export async function main(argv: readonly string[], out: Out = (l) => process.stdout.write(`${l}\n`), err: Out = (l) => process.stderr.write(`${l}\n`)): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], allowPositionals: true, options: FLAGS });
  } catch (error) {
    err(`dispatchctl: ${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command, ...args] = positionals;
  if (values.help || !command) {
    out(USAGE);
    return values.help ? 0 : 2;
  }
  let connection: Connection;
  try {
    connection = resolveConnection(values, process.env);
  } catch (error) {
    return failed(error, err);
  }
  const { address, credentials, token } = connection;
  // grpc-js hands Node's TLS an IP address as the server name when the address is one, and Node
  // then prints a deprecation warning (DEP0123) that a dispatchctl user can do nothing about.
  if (connection.tls) process.noDeprecation = true;
  const options: CallOptions = { metadata: token ? { authorization: `Bearer ${token}` } : {}, deadlineMs: connection.deadlineMs };
  const sessionId = values.session ?? `cli-${process.pid}`;
  const dispatch = createDispatchClient(address, credentials);
  const registry = createRegistryClient(address, credentials);
  try {
    switch (`${command} ${args[0] ?? ''}`.trim()) {
      case 'tools list': {
        let listed = 0;
        for await (const { tools, warnings } of allPages((pageToken) => registry.listTools({ pageToken }, options))) {
          for (const t of tools) out(`${terminalWord(t.name).padEnd(24)} ${(t.effect === Effect.READ_ONLY ? 'read-only' : 'side-effect').padEnd(12)} ${t.executor.case ?? ''}  ${terminalText(t.description)}`);
          for (const warning of warnings) err(`dispatchctl: ${terminalText(warning)}`);
          listed += tools.length;
        }
        if (listed === 0) out('(no tools)');
        return 0;
      }
      case 'tools register': {
        if (!args[1]) throw new UsageError('tools register needs FILE');
        const { tools } = parseConfig(readFileSync(args[1] === '-' ? 0 : args[1], 'utf8'), args[1]);
        if (tools.length === 0) throw new UsageError(`${args[1]} has no tools (a \`tools:\` list, as in the config file)`);
        const { registered } = await registry.registerTools({ tools: [...tools], replace: values.replace ?? false }, options);
        out(`registered ${registered} tool${registered === 1 ? '' : 's'}: ${tools.map((t) => terminalWord(t.name)).join(', ')}`);
        return 0;
      }
      case 'tools remove': {
        if (!args[1]) throw new UsageError('tools remove needs NAME');
        const { removed } = await registry.removeTool({ name: args[1] }, options);
        out(removed ? `removed ${terminalWord(args[1])}` : `no tool ${terminalWord(args[1])} was registered by RPC`);
        return removed ? 0 : 1;
      }
      default:
        break;
    }
    switch (command) {
      case 'call': {
        const [name, json = '{}'] = args;
        if (!name) throw new UsageError('call needs TOOL and JSON');
        const { results } = await dispatch.dispatch({ sessionId, calls: [{ id: 'call_1', name, arguments: json }] }, options);
        results.forEach((r) => out(formatResult(r)));
        return results.some((r) => r.isError) ? RESULT_ERROR : 0;
      }
      case 'dispatch': {
        if (!args[0]) throw new UsageError('dispatch needs FILE');
        const { results } = await dispatch.dispatch(readTurnFile(args[0], { sessionId, parallel: values.parallel ?? false }), options);
        results.forEach((r) => out(formatResult(r)));
        return results.some((r) => r.isError) ? RESULT_ERROR : 0;
      }
      case 'read': {
        if (!args[0]) throw new UsageError('read needs HANDLE');
        let offset = uint32Argument(args[1] ?? '0', 'OFFSET');
        const pages: string[] = [];
        for (;;) {
          const page = await dispatch.readResult({ resultHandle: args[0], offset, limit: 65_536 }, options);
          pages.push(terminalText(page.text, true));
          if (page.nextOffset >= page.totalChars || page.text === '') break;
          offset = page.nextOffset;
        }
        out(pages.join(''));
        return 0;
      }
      case 'end-session':
        if (!args[0]) throw new UsageError('end-session needs SESSION');
        await dispatch.endSession({ sessionId: args[0] }, options);
        out(`session ${terminalWord(args[0])} ended`);
        return 0;
      case 'approvals':
        return await approvalsCommand(dispatch, args, values, options, out);
      case 'stats': {
        let shown = 0;
        for await (const { stats } of allPages((pageToken) => registry.getToolStats({ tool: args[0] ?? '', pageToken }, options))) {
          for (const tool of stats) out(formatStats(tool));
          shown += stats.length;
        }
        if (shown === 0) out('(no tools)');
        return 0;
      }
      case 'parse': {
        if (!args[0]) throw new UsageError('parse needs FILE');
        return parseCommand(args[0], out, { err });
      }
      case 'events': {
        const controller = new AbortController();
        process.once('SIGINT', () => controller.abort());
        // Awaited here, so that its failures are reported as the other commands' are.
        return await eventsCommand(address, { session: values.session, tool: values.tool, kinds: values.kind, token, follow: values.follow, credentials, tls: connection.tls, startTimeoutMs: connection.deadlineMs }, out, controller.signal, err);
      }
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (error) {
    return failed(error, err, connection.tls);
  } finally {
    dispatch.close();
    registry.close();
  }
}

/** Reports `error` on `err` (with a hint when a plaintext channel seems to meet TLS); resolves with the exit code: 2 for a usage error, else 1. */
function failed(error: unknown, err: Out, tls = true): number {
  if (error instanceof UsageError) {
    err(`dispatchctl: ${error.message}${error.showUsage ? `\n${USAGE}` : ''}`);
    return 2;
  }
  const status = (error as grpc.ServiceError).code;
  // A status's details can quote what the model or a tool wrote.
  err(typeof status === 'number' ? `dispatchctl: ${grpc.status[status]}: ${terminalText(((error as grpc.ServiceError).details ?? '').trimEnd(), true)}${connectionHint(error as grpc.ServiceError, tls)}` : `dispatchctl: ${(error as Error).message}`);
  return 1;
}
