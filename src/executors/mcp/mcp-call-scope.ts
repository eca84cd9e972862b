import { AsyncLocalStorage } from 'node:async_hooks';
import type { DispatchError } from '../../errors';

/**
 * The tool call whose request a fetch of the Streamable HTTP transport carries. The SDK reads an
 * SSE answer apart from the request that asked for it and reports a failed stream to `onerror`
 * alone, so the fetch fails the call through its scope (see mcp-fetch).
 */
export interface McpCallScope {
  /** Why the call's answer could not be read, once the fetch has failed it. */
  readonly failure: DispatchError | undefined;
  /** Records `error` (the first one only) and ends the call's request with it. */
  fail(error: DispatchError): void;
}

const storage = new AsyncLocalStorage<McpCallScope>();

/** A scope whose `fail` records the error and calls `abort` once. */
export function createCallScope(abort: (error: DispatchError) => void): McpCallScope {
  let failure: DispatchError | undefined;
  return {
    get failure() {
      return failure;
    },
    fail(error) {
      if (failure) return;
      failure = error;
      abort(error);
    },
  };
}

/** Runs `fn` (which sends the call's request) in `scope`: the fetches it makes see it. */
export function inCallScope<T>(scope: McpCallScope, fn: () => T): T {
  return storage.run(scope, fn);
}

/** The scope of the call whose request is being made or read, if any (undefined outside calls). */
export function currentCallScope(): McpCallScope | undefined {
  return storage.getStore();
}
