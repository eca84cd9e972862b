import { parseArgs } from 'node:util';
import { approvalsRequest } from './approvals-command';
import { suggestKey } from '../config/unknown-key';
import { orList, uint32Argument, unknownSubcommand, UsageError } from './usage';

// What dispatchctl needs to read its command line, answer --help and refuse a bad flag, apart from
// the commands (gRPC, the clients, the event formatting), which load only once there is one to run.

/** The deadline of each call dispatchctl makes but `call` and `dispatch`'s (and how long `events` waits for the server to answer), in seconds. @default 120 */
export const DEFAULT_TIMEOUT_SECONDS = 120;

/**
 * The deadline of `call` and `dispatch`, in seconds: past dispatchd's default approval timeout
 * (limits.approval_timeout_ms, 120 s) plus a tool's default timeout (30 s) and a margin, so that a
 * call of an interactive turn nobody approves ends BLOCKED (no approver answered) and its turn
 * answers. At 120 s, the approval timeout's length, the RPC's deadline came first: dispatchd
 * bounds an approval's wait by the call's deadline, so the turn ended DEADLINE_EXCEEDED and its
 * results were lost. @default 180
 */
export const DEFAULT_TURN_TIMEOUT_SECONDS = 180;

/** The commands that run a turn, whose deadline is {@link DEFAULT_TURN_TIMEOUT_SECONDS} unless --timeout says otherwise. */
export const TURN_COMMANDS: ReadonlySet<string> = new Set(['call', 'dispatch']);

/** The exit code of `call` and `dispatch` when the turn ran and any result is an error (INVALID_ARGUMENTS, UNKNOWN_TOOL, ...). */
export const RESULT_ERROR = 3;

/** dispatchctl's usage text, shown by --help (-h) and when no command is given; a usage error points to it. */
export const USAGE = `usage: dispatchctl [--address HOST:PORT] [--token T] [--session S] [--timeout SECONDS]
                   [--tls] [--tls-ca FILE] [--tls-cert FILE --tls-key FILE] COMMAND
  tools list                 the tools dispatch can call
  tools register FILE        register the tools of a YAML file (its \`tools:\` list, as in the
                             config file); --replace replaces tools of the same name
  tools remove NAME          remove a tool registered by RPC
  stats [TOOL]               calls, breaker, health, the six rates and errors per tool, alerts
  call TOOL JSON             dispatch one call, e.g. call echo '{"a":1}'
  dispatch FILE              dispatch a turn: {"session_id","calls":[{"id","name","arguments"}],"mode"} (mode: parallel or sequential;
                             also "interactive": true, an ask policy's call waiting for approval, and "offered_tools");
                             --parallel runs it in parallel whatever its mode says
  read HANDLE [OFFSET]       the whole text of a truncated result
  end-session SESSION        clear a session's records, results and scratch directory
  memory SESSION             the session's trajectory memory: a line per call that succeeded
  erase-tenant TENANT        end every session of the token's tenant, TENANT spelled out
                             (scope admin); --remove-tools also removes the tools it registered
  approvals [list] [--tool T]
                             the calls waiting for approval, with the arguments that run
                             if approved; --session and --tool filter
  approvals resolve ID --approve|--deny [--reason R]
                             decide a waiting call (its ID as approvals lists it): approved,
                             it runs; denied, it is refused BLOCKED and the model reads R;
                             both show R in the APPROVAL_RESOLVED event;
                             exit 1 if it was not waiting
  parse FILE                 find tool calls in raw model output ('-' reads stdin)
  events [--tool T]... [--kind K]... [--follow | -f]
                             tail events live, one line each; --session, --tool and --kind
                             (tool_post, RETRY, ...; both repeatable) filter; --follow subscribes
                             again when the server restarts or goes away; Ctrl-C stops
  --address HOST:PORT        the server ([::1]:PORT for IPv6, or unix:PATH); the port is required
  --session S                the session of call and dispatch (a turn file's session_id wins);
                             default cli-<pid>, a new session each run, so a side-effecting
                             call run again runs again: retry with the same --session (its
                             idempotency record, kept per session, then replays the result)
  --timeout SECONDS          each call's deadline, and how long events waits for the server to
                             answer (default ${DEFAULT_TIMEOUT_SECONDS}; ${DEFAULT_TURN_TIMEOUT_SECONDS} for call and dispatch, past the
                             server's default approval timeout of 120 s and a tool's 30 s: give
                             more when it waits longer, or for several approvals in one turn)
  --tls                      TLS, the server checked against the system's CAs
  --tls-ca FILE              TLS, the server checked against this CA bundle (PEM)
  --tls-cert F --tls-key F   present this client certificate (mutual TLS; TLS is then on)
  --allow-plaintext-token    send the token without TLS to an address beyond loopback
                             (refused otherwise; for a connection protected another way)
  environment: DISPATCH_ADDRESS (default 127.0.0.1:50051), DISPATCH_TOKEN, DISPATCH_TLS_CA,
               DISPATCH_TLS_CERT, DISPATCH_TLS_KEY (an empty one counts as unset)
  -h, --help                 this text; --version: dispatchctl's version
  exit codes: 0; 1 an RPC failed (the status on stderr, then its reason: "(reason LOOP_DETECTED)"),
              events' stream ended by the server, the approval approvals resolve named was
              not waiting, or a file given cannot be read or used (a turn or tools file, --tls-ca);
              2 a usage error (the command line); 3 call or dispatch ran and a result is an error
              (UNKNOWN_TOOL, ...)
  what a client, a model or a tool wrote is shown with control, bidi and invisible characters
  escaped (\\u001b); names and ids with whitespace or escapes are quoted`;

/** The flags dispatchctl takes (parseArgs' options); --help names each. */
export const DISPATCHCTL_FLAGS = {
  address: { type: 'string' },
  token: { type: 'string' },
  timeout: { type: 'string' },
  tls: { type: 'boolean' },
  'tls-ca': { type: 'string' },
  'tls-cert': { type: 'string' },
  'tls-key': { type: 'string' },
  'allow-plaintext-token': { type: 'boolean' },
  session: { type: 'string' },
  // Repeatable, as --kind: events subscribes to every tool named (given twice, the last alone was kept).
  tool: { type: 'string', multiple: true },
  kind: { type: 'string', multiple: true },
  follow: { type: 'boolean', short: 'f' },
  parallel: { type: 'boolean' },
  replace: { type: 'boolean' },
  'remove-tools': { type: 'boolean' },
  approve: { type: 'boolean' },
  deny: { type: 'boolean' },
  reason: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const;

/** Parses dispatchctl's command line; throws parseArgs' error on an unknown or malformed flag. */
export function parseCommandLine(argv: readonly string[]) {
  return parseArgs({ args: [...argv], allowPositionals: true, options: DISPATCHCTL_FLAGS });
}

/** The flags of a command line, as parseCommandLine gives them. */
export type CommandFlags = ReturnType<typeof parseCommandLine>['values'];

/**
 * Each command dispatchctl runs: what it needs after its name (none for an optional one), and the
 * arguments it takes, one word each (none for `approvals`, which reads its own).
 */
const COMMANDS: ReadonlyMap<string, readonly [needs: string | undefined, takes: string | undefined]> = new Map([
  ['tools list', [undefined, '']],
  ['tools register', ['FILE', 'FILE']],
  ['tools remove', ['NAME', 'NAME']],
  ['stats', [undefined, '[TOOL]']],
  ['call', ['TOOL and JSON', 'TOOL [JSON]']],
  ['dispatch', ['FILE', 'FILE']],
  ['read', ['HANDLE', 'HANDLE [OFFSET]']],
  ['end-session', ['SESSION', 'SESSION']],
  ['memory', ['SESSION', 'SESSION']],
  ['erase-tenant', ['TENANT', 'TENANT']],
  ['approvals', [undefined, undefined]],
  ['parse', ['FILE', 'FILE']],
  ['events', [undefined, '']],
] as const);

/** The subcommands of `tools`, as COMMANDS names them. */
const TOOLS_SUBCOMMANDS = [...COMMANDS.keys()].filter((name) => name.startsWith('tools ')).map((name) => name.slice('tools '.length));

/** The names a command line may start with: `tools` for its subcommands. */
const COMMAND_NAMES = [...new Set([...COMMANDS.keys()].map((name) => name.split(' ')[0]!))];

/**
 * The UsageError of a command that is none of dispatchctl's, with the one likely meant. `tools`
 * without its subcommand, or with one it has not, says so: `tools lst` was "unknown command
 * "tools"", as if `tools` were the word misspelt.
 */
function unknownCommand(command: string, args: readonly string[]): UsageError {
  if (command === 'tools') {
    const sub = args[0];
    return sub === undefined ? new UsageError(`tools needs a subcommand: ${orList(TOOLS_SUBCOMMANDS)}`) : unknownSubcommand('tools', sub, TOOLS_SUBCOMMANDS);
  }
  const meant = command.includes(' ') ? undefined : suggestKey(command, COMMAND_NAMES);
  return new UsageError(`unknown command ${JSON.stringify(command)}${meant === undefined ? '' : ` (did you mean ${meant}?)`}`);
}

/**
 * The flags whose value must not be empty: `--session ""` (a shell's unset variable) reached the
 * server, which refused it (exit 1, `session_id is required`); `--token ""` sent no token, and
 * `--tls-ca ""` failed as a file that cannot be read. `--tool` is not among them: `events --tool
 * ""` asks for the events that have no tool (TURN_END); approvals refuses it (approvalsRequest).
 * `--address` and `--timeout` have their own messages (resolveConnection).
 */
const NOT_EMPTY = ['session', 'token', 'tls-ca', 'tls-cert', 'tls-key', 'kind', 'reason'] as const;

/** Throws a UsageError naming the first flag of NOT_EMPTY given an empty value, as dispatchd refuses its own. */
export function refuseEmptyFlags(flags: CommandFlags): void {
  for (const flag of NOT_EMPTY) {
    const value: string | readonly string[] | undefined = flags[flag];
    if (value === '' || (Array.isArray(value) && value.includes(''))) throw new UsageError(`--${flag} must not be empty`);
  }
}

/**
 * Throws a UsageError when `command` is none of dispatchctl's, or lacks the argument it needs, or
 * is given more than it takes (they were dropped: `end-session a b` ended a alone, exit 0; `call
 * echo {"a": 1}` unquoted sent `{"a":`), or (`approvals`) its arguments and flags are off, or
 * (`read`) its OFFSET is no uint32: checked before the commands (and gRPC) load.
 * Resolves `tools`' subcommand into the name.
 */
export function checkCommand(command: string, args: readonly string[], flags: CommandFlags): string {
  const name = command === 'tools' && args[0] !== undefined ? `tools ${args[0]}` : command;
  // One argument "tools remove" is no command: only `tools` and its subcommand, apart, name one.
  const known = COMMANDS.get(name);
  if (known === undefined || command.includes(' ')) throw unknownCommand(command, args);
  const [needs, takes] = known;
  const own = name.startsWith('tools ') ? args.slice(1) : args;
  if (needs !== undefined && !own[0]) throw new UsageError(`${name} needs ${needs}`);
  const most = takes?.split(' ').filter(Boolean).length ?? Infinity;
  if (own.length > most) throw new UsageError(`${name} takes ${takes || 'no arguments'}, got also ${JSON.stringify(own[most])} (quote an argument holding spaces)`);
  if (name === 'approvals') approvalsRequest(args, flags);
  if (name === 'read' && args[1] !== undefined) uint32Argument(args[1], 'OFFSET');
  return name;
}
