import { ErrorKind } from '../../../gen/dispatch/v1/dispatch_pb';
import { DispatchError } from '../../errors';
import type { Executor } from '../executor';

/** A call to an MCP tool whose server is not in this dispatch's `mcp_servers:`: UNAVAILABLE, before it ran. */
export function notConfiguredError(server: string): DispatchError {
  return new DispatchError(ErrorKind.UNAVAILABLE, `MCP server "${server}" is not configured on this dispatch (add it to mcp_servers)`, { phase: 'before' });
}

/**
 * The MCP executor of a dispatch with no `mcp_servers:` (a tool registered by RPC may still name a
 * server). It loads none of the MCP SDK, which the servers' executor does.
 */
export const unconfiguredMcpExecutor: Executor = {
  async execute(tool) {
    if (tool.spec.executor.case !== 'mcp') throw new Error('not an mcp tool');
    throw notConfiguredError(tool.spec.executor.value.server);
  },
};
