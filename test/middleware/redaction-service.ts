import { startToolServer, type ToolRoute, type ToolServer } from '../helpers/servers';
import { startGuardedApp } from '../guards/helpers';

/** A guarded dispatch app serving HTTP tools from a loopback tool server. */
export interface ToolApp {
  readonly app: Awaited<ReturnType<typeof startGuardedApp>>;
  readonly tools: ToolServer;
  close(): Promise<void>;
}

/**
 * Starts a tool server with `routes` and a guarded app whose `tools:` section `toolsYaml` writes
 * from the tool server's URL.
 */
export async function startToolApp(routes: Record<string, ToolRoute>, toolsYaml: (url: string) => string): Promise<ToolApp> {
  const tools = await startToolServer(routes);
  const app = await startGuardedApp(`tools:\n${toolsYaml(tools.url)}`);
  return {
    app,
    tools,
    async close() {
      await app.close();
      await tools.close();
    },
  };
}
