import * as grpc from '@grpc/grpc-js';
import { allPages, createDispatchClient, createRegistryClient, type CallOptions } from '../client';
import { eventsCommand } from './events-command';
import { formatResult } from './format-result';
import { formatToolLine } from './format-tool';
import type * as ToolsFileModule from '../config/tools-file';
import { terminalText, terminalWord } from '../events/terminal-text';
import { formatStats } from './format-stats';
import { approvalsCommand } from './approvals-command';
import { parseCommand } from './parse-command';
import { connectionHint, resolveConnection, type Connection } from './dispatchctl-connection';
import { readTurnFile } from './turn-file';
import { reasonNote, statusDetails } from './status-reason';
import { FileError, HELP_HINT, readText, uint32Argument, UsageError } from './usage';
import type { Out } from './dispatchctl';
import { DEFAULT_TIMEOUT_SECONDS, DEFAULT_TURN_TIMEOUT_SECONDS, RESULT_ERROR, TURN_COMMANDS, type CommandFlags } from './dispatchctl-usage';

/**
 * Runs `command` (its arguments `args`, which hold what checkCommand asked of them) with the flags
 * given; resolves with the exit code. Loaded by dispatchctl's main once checkCommand passed the
 * command line; `command` is the name it gave (`tools list`, `call`, ...). `outGone` fires when
 * what reads `out` has gone (a closed pipe): `events` then stops as on Ctrl-C.
 */
export async function runCommand(command: string, args: readonly string[], values: CommandFlags, out: Out, err: Out, outGone?: AbortSignal): Promise<number> {
  let connection: Connection;
  try {
    // A turn's call outlasts an approval's wait (DEFAULT_TURN_TIMEOUT_SECONDS), so that an unanswered one ends BLOCKED.
    connection = resolveConnection(values, process.env, TURN_COMMANDS.has(command) ? DEFAULT_TURN_TIMEOUT_SECONDS : DEFAULT_TIMEOUT_SECONDS);
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
    switch (command) {
      case 'tools list': {
        let listed = 0;
        for await (const { tools, warnings } of allPages((pageToken) => registry.listTools({ pageToken }, options))) {
          for (const t of tools) out(formatToolLine(t));
          for (const warning of warnings) err(`dispatchctl: ${terminalText(warning)}`);
          listed += tools.length;
        }
        if (listed === 0) out('(no tools)');
        return 0;
      }
      case 'tools register': {
        // Required here: the config's parser (YAML, JSON Schema, RE2) is for this command alone.
        const { parseToolsFile } = require('../config/tools-file') as typeof ToolsFileModule;
        const tools = parseToolsFile(readText(args[1]!), args[1]!);
        if (tools.length === 0) throw new FileError(`${args[1]} has no tools (a \`tools:\` list, as in the config file)`);
        const { registered } = await registry.registerTools({ tools: [...tools], replace: values.replace ?? false }, options);
        out(`registered ${registered} tool${registered === 1 ? '' : 's'}: ${tools.map((t) => terminalWord(t.name)).join(', ')}`);
        return 0;
      }
      case 'tools remove': {
        const { removed } = await registry.removeTool({ name: args[1] }, options);
        out(removed ? `removed ${terminalWord(args[1])}` : `no tool ${terminalWord(args[1])} was registered by RPC`);
        return removed ? 0 : 1;
      }
      case 'call': {
        const [name, json = '{}'] = args;
        if (!isJson(json)) err('dispatchctl: warning: the arguments are not JSON; sending them as they are');
        const { results } = await dispatch.dispatch({ sessionId, calls: [{ id: 'call_1', name, arguments: json }] }, options);
        results.forEach((r) => out(formatResult(r)));
        return results.some((r) => r.isError) ? RESULT_ERROR : 0;
      }
      case 'dispatch': {
        const { results } = await dispatch.dispatch(readTurnFile(args[0], { sessionId, parallel: values.parallel ?? false }), options);
        results.forEach((r) => out(formatResult(r)));
        return results.some((r) => r.isError) ? RESULT_ERROR : 0;
      }
      case 'read': {
        let offset = uint32Argument(args[1] ?? '0', 'OFFSET');
        const pages: string[] = [];
        for (;;) {
          const page = await dispatch.readResult({ resultHandle: args[0], offset, limit: 65_536 }, options);
          // Past its end (it printed nothing and exited 0): a wrong offset is said so.
          if (pages.length === 0 && page.text === '' && offset > 0 && offset >= page.totalChars) throw new UsageError(`OFFSET ${offset} is past the result's end: it holds ${page.totalChars} characters`, false);
          pages.push(terminalText(page.text, true));
          if (page.nextOffset >= page.totalChars || page.text === '') break;
          offset = page.nextOffset;
        }
        out(pages.join(''));
        return 0;
      }
      case 'end-session':
        await dispatch.endSession({ sessionId: args[0] }, options);
        out(`session ${terminalWord(args[0])} ended`);
        return 0;
      case 'erase-tenant': {
        const { sessionsEnded, toolsRemoved } = await dispatch.eraseTenant({ confirmTenant: args[0], removeTools: values['remove-tools'] ?? false }, options);
        out(`tenant ${terminalWord(args[0])}: ${sessionsEnded} session${sessionsEnded === 1n ? '' : 's'} ended${values['remove-tools'] ? `, ${toolsRemoved} tool${toolsRemoved === 1 ? '' : 's'} removed` : ''}`);
        return 0;
      }
      case 'memory': {
        const { entries, omitted } = await dispatch.getSessionMemory({ sessionId: args[0] }, options);
        if (omitted > 0) out(`(${omitted} older entries left out to fit the answer)`);
        for (const entry of entries) out(terminalText(entry));
        if (entries.length === 0) err(`dispatchctl: session ${terminalWord(args[0])} has no memory (no call of it succeeded, it ended, or it is another tenant's)`);
        return 0;
      }
      case 'approvals':
        return await approvalsCommand(dispatch, args, values, options, out);
      case 'stats': {
        let shown = 0;
        // Why the counts cover this replica only (Redis away): said once, before them.
        let warned = false;
        const onHeaders = (headers: grpc.Metadata) => {
          const warning = headers.get('dispatch-stats-warning')[0];
          if (warning === undefined || warned) return;
          warned = true;
          out(`WARNING ${terminalText(String(warning))}`);
        };
        for await (const { stats } of allPages((pageToken) => registry.getToolStats({ tool: args[0] ?? '', pageToken }, { ...options, onHeaders }))) {
          for (const tool of stats) out(formatStats(tool));
          shown += stats.length;
        }
        if (shown === 0) out('(no tools)');
        return 0;
      }
      case 'parse': {
        return parseCommand(args[0], out, { err });
      }
      case 'events': {
        const controller = new AbortController();
        process.once('SIGINT', () => controller.abort());
        outGone?.addEventListener('abort', () => controller.abort(), { once: true });
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

/**
 * Whether the server reads `text` as JSON (blank text it reads as `{}`). `call`'s arguments are
 * sent whatever they are: the server's answer (INVALID_ARGUMENTS) is what a model sending them
 * gets, and `call` reproduces it; a warning on stderr says first that the command line sent no JSON.
 */
function isJson(text: string): boolean {
  if (text.trim() === '') return true;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Reports `error` on `err` (with a hint when the channel and the server disagree on TLS); resolves with the exit code: 2 for a usage error, else 1. */
function failed(error: unknown, err: Out, tls = true): number {
  // A message can quote a file's text, often a model's (a turn file's or a tools file's key, what
  // V8 quotes around a JSON syntax error), and a status's details what the model or a tool wrote.
  if (error instanceof UsageError) {
    err(`dispatchctl: ${terminalText(error.message)}${error.pointToHelp ? `\n${HELP_HINT}` : ''}`);
    return 2;
  }
  const status = (error as grpc.ServiceError).code;
  err(typeof status === 'number' ? `dispatchctl: ${grpc.status[status]}: ${terminalText(statusDetails((error as grpc.ServiceError).details), true)}${reasonNote(error as grpc.ServiceError)}${connectionHint(error as grpc.ServiceError, tls)}` : `dispatchctl: ${terminalText((error as Error).message)}`);
  return 1;
}
