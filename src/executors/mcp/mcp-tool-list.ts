import { createHash } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { PaginatedResultSchema } from '@modelcontextprotocol/sdk/types.js';

/** Most pages of a server's tool list read; the rest are not imported. */
export const MAX_TOOL_PAGES = 20;

/**
 * Every tool a server lists, as sent (unchecked: importTools checks each). Asked with the SDK's
 * `request` and a result schema that only requires a page (the SDK's `listTools` checks the whole
 * list: one tool whose inputSchema lacks "type": "object" failed it all, so none of the server's
 * tools was imported and its process was respawned at every backoff).
 */
export async function listAllTools(client: Client, timeout: number): Promise<unknown[]> {
  const tools: unknown[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_TOOL_PAGES; page++) {
    const params = cursor === undefined ? {} : { params: { cursor } };
    const listed = await client.request({ method: 'tools/list', ...params }, PaginatedResultSchema, { timeout });
    const pageTools = (listed as { tools?: unknown }).tools;
    if (!Array.isArray(pageTools)) throw new Error('the server answered tools/list without a "tools" list');
    tools.push(...(pageTools as unknown[]));
    cursor = listed.nextCursor;
    if (cursor === undefined) break;
  }
  return tools;
}

/**
 * `task` run one at a time: a run asked for while one is under way makes that one run `task` once
 * more after it (however many were asked for), and resolves with it. A server's flood of
 * tools/list_changed notifications started one listing each, all at once (2,000 notifications:
 * 2,000 concurrent listings and imports, and the event loop stalled for over 30 s). `task` is given
 * whether another run has been asked for since it began (its work is then superseded).
 */
export function coalesced(task: (superseded: () => boolean) => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  let again = false;
  return () => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      try {
        for (;;) {
          again = false;
          try {
            await task(() => again);
          } catch (error) {
            // A run asked for meanwhile is still made; only the last run's failure is told.
            if (!again) throw error;
            continue;
          }
          if (!again) break;
        }
      } finally {
        running = undefined;
      }
    })();
    return running;
  };
}

/** A digest of a listed tool list, to tell it from another (the same list listed again is not imported again). */
export function listDigest(tools: readonly unknown[]): string {
  return createHash('sha256').update(JSON.stringify(tools)).digest('base64');
}
