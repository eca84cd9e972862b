import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { DispatchMode } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { createDispatchClient, createRegistryClient, type CallOptions } from '../client';
import { eventsCommand } from './events-command';
import { formatResult } from './format-result';
import { parseConfig } from '../config';
import { formatStats } from './format-stats';
import { parseCommand } from './parse-command';

const USAGE = `usage: dispatchctl [--address HOST:PORT] [--token T] [--session S] COMMAND
  tools list                 the tools dispatch can call
  tools register FILE        register the tools of a YAML file (its \`tools:\` list, as in the
                             config file); --replace replaces tools of the same name
  tools remove NAME          remove a tool registered by RPC
  stats [TOOL]               calls, breaker, health and the six rates per tool, with alerts
  call TOOL JSON             dispatch one call, e.g. call echo '{"a":1}'
  dispatch FILE              dispatch a turn: {"session_id","calls":[{"id","name","arguments"}],"mode"}
  read HANDLE [OFFSET]       the whole text of a truncated result
  end-session SESSION        clear a session's records, results and scratch directory
  parse FILE                 find tool calls in raw model output ('-' reads stdin)
  events [--tool T] [--kind K]... [--follow]
                             tail events live, one line each; --session, --tool and --kind
                             (tool_post, RETRY, ...; repeatable) filter; --follow subscribes
                             again when the server restarts or goes away; Ctrl-C stops
  environment: DISPATCH_ADDRESS (default 127.0.0.1:50051), DISPATCH_TOKEN`;

type Out = (line: string) => void;

/** Runs one dispatchctl command; resolves with the exit code (non-zero on a hard error). */
export async function main(argv: readonly string[], out: Out = (l) => process.stdout.write(`${l}\n`), err: Out = (l) => process.stderr.write(`${l}\n`)): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], allowPositionals: true, options: { address: { type: 'string' }, token: { type: 'string' }, session: { type: 'string' }, tool: { type: 'string' }, kind: { type: 'string', multiple: true }, follow: { type: 'boolean', short: 'f' }, parallel: { type: 'boolean' }, replace: { type: 'boolean' }, help: { type: 'boolean' } } });
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
  const address = values.address ?? process.env.DISPATCH_ADDRESS ?? '127.0.0.1:50051';
  const token = values.token ?? process.env.DISPATCH_TOKEN;
  const options: CallOptions = { metadata: token ? { authorization: `Bearer ${token}` } : {}, deadlineMs: 120_000 };
  const sessionId = values.session ?? `cli-${process.pid}`;
  const dispatch = createDispatchClient(address);
  const registry = createRegistryClient(address);
  try {
    switch (`${command} ${args[0] ?? ''}`.trim()) {
      case 'tools list': {
        const { tools } = await registry.listTools({}, options);
        for (const t of tools) out(`${t.name.padEnd(24)} ${(t.effect === Effect.READ_ONLY ? 'read-only' : 'side-effect').padEnd(12)} ${t.executor.case ?? ''}  ${t.description}`);
        if (tools.length === 0) out('(no tools)');
        return 0;
      }
      case 'tools register': {
        if (!args[1]) throw new UsageError('tools register needs FILE');
        const { tools } = parseConfig(readFileSync(args[1] === '-' ? 0 : args[1], 'utf8'), args[1]);
        if (tools.length === 0) throw new UsageError(`${args[1]} has no tools (a \`tools:\` list, as in the config file)`);
        const { registered } = await registry.registerTools({ tools: [...tools], replace: values.replace ?? false }, options);
        out(`registered ${registered} tool${registered === 1 ? '' : 's'}: ${tools.map((t) => t.name).join(', ')}`);
        return 0;
      }
      case 'tools remove': {
        if (!args[1]) throw new UsageError('tools remove needs NAME');
        const { removed } = await registry.removeTool({ name: args[1] }, options);
        out(removed ? `removed ${args[1]}` : `no tool ${args[1]} was registered by RPC`);
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
        return 0;
      }
      case 'dispatch': {
        if (!args[0]) throw new UsageError('dispatch needs FILE');
        const turn = JSON.parse(readFileSync(args[0] === '-' ? 0 : args[0], 'utf8')) as { session_id?: string; turn?: number; mode?: string; max_concurrency?: number; calls: { id?: string; name: string; arguments: unknown }[] };
        const calls = turn.calls.map((c, i) => ({ id: c.id ?? `call_${i + 1}`, name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments ?? {}) }));
        const mode = values.parallel || turn.mode === 'parallel' ? DispatchMode.PARALLEL : DispatchMode.SEQUENTIAL;
        const { results } = await dispatch.dispatch({ sessionId: turn.session_id ?? sessionId, turn: turn.turn ?? 0, calls, mode, maxConcurrency: turn.max_concurrency ?? 0 }, options);
        results.forEach((r) => out(formatResult(r)));
        return 0;
      }
      case 'read': {
        if (!args[0]) throw new UsageError('read needs HANDLE');
        let offset = Number(args[1] ?? 0);
        for (;;) {
          const page = await dispatch.readResult({ resultHandle: args[0], offset, limit: 65_536 }, options);
          process.stdout.write(page.text);
          if (page.nextOffset >= page.totalChars || page.text === '') break;
          offset = page.nextOffset;
        }
        out('');
        return 0;
      }
      case 'end-session':
        if (!args[0]) throw new UsageError('end-session needs SESSION');
        await dispatch.endSession({ sessionId: args[0] }, options);
        out(`session ${args[0]} ended`);
        return 0;
      case 'stats': {
        const { stats } = await registry.getToolStats({ tool: args[0] ?? '' }, options);
        for (const tool of stats) out(formatStats(tool));
        if (stats.length === 0) out('(no tools)');
        return 0;
      }
      case 'parse': {
        if (!args[0]) throw new UsageError('parse needs FILE');
        return parseCommand(args[0], out);
      }
      case 'events': {
        const controller = new AbortController();
        process.once('SIGINT', () => controller.abort());
        return eventsCommand(address, { session: values.session, tool: values.tool, kinds: values.kind, token, follow: values.follow }, out, controller.signal, err);
      }
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      err(`dispatchctl: ${error.message}\n${USAGE}`);
      return 2;
    }
    const status = (error as grpc.ServiceError).code;
    err(status === undefined ? `dispatchctl: ${(error as Error).message}` : `dispatchctl: ${grpc.status[status]}: ${(error as grpc.ServiceError).details}`);
    return 1;
  } finally {
    dispatch.close();
    registry.close();
  }
}

class UsageError extends Error {}
