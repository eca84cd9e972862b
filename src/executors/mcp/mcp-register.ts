import { setImmediate as turn } from 'node:timers/promises';
import type { ToolSpec } from '../../../gen/dispatch/v1/tool_pb';
import { RegistryError, type ToolRegistry } from '../../registry';

/**
 * Schemas of an MCP server's tools of at most this many bytes compile on the event loop (a few ms
 * each, the loop let go between tools); larger ones in the compiler's worker thread. At the
 * registry's own threshold (4 KiB, for a worker's hello, whose tools are called at once), a server
 * listing 200 tools of 3.6 KiB held the loop 2.7-3.6 s at each import, every call in flight with it.
 */
export const MCP_COMPILE_HERE_BYTES = 1024;

/** When an imported tool's registration is made, and when it is not wanted any more. */
export interface ImportState {
  /** The servers are closing: nothing more is registered. */
  readonly closed: () => boolean;
  /** The list the tool comes from is superseded by a newer one: its compiled tools are not installed. */
  readonly superseded: () => boolean;
}

/**
 * Registers an imported tool, its schema compiled in the compiler's worker thread (see
 * ToolRegistry.registerAsync) unless small: a server changing its tools at runtime
 * (tools/list_changed, a reconnection) held every call in flight for seconds. Resolves false, with
 * nothing registered, when its list was superseded while it compiled. When the worker takes no
 * more now (`limit`: its queue full of tenants' schemas), compiled on the event loop as before, the
 * operator's tool never refused for that. Lets the event loop turn before it resolves, so that an
 * import's tools compiled on the loop never hold it together.
 */
export async function registerImported(registry: ToolRegistry, spec: ToolSpec, state: ImportState): Promise<boolean> {
  try {
    const wanted = () => !state.superseded() && !state.closed();
    const registered = await registry.registerAsync([spec], { tenant: '', replace: true, compileHereUpTo: MCP_COMPILE_HERE_BYTES, wanted });
    return registered.length > 0;
  } catch (error) {
    if (!(error instanceof RegistryError && error.code === 'limit') || state.closed()) throw error;
    if (state.superseded()) return false;
    registry.register([spec], { tenant: '', replace: true });
    return true;
  } finally {
    await turn();
  }
}
