import { createHook } from 'node:async_hooks';

/** The process's active resources (ref'd timers, sockets, servers), counted by type. */
function counts(): Map<string, number> {
  const found = new Map<string, number>();
  for (const r of process.getActiveResourcesInfo()) found.set(r, (found.get(r) ?? 0) + 1);
  return found;
}

interface JestTimer {
  readonly _destroyed?: boolean;
  hasRef(): boolean;
}

/**
 * Watches what the process runs from now on. `left()` names, by type, the resources running
 * beyond those at the start (`Timeout +1`), without jest's own: in a run in band (`-i`) its
 * reporter's status timer comes and goes in this process, and was taken for a timer left behind.
 */
export function watchResources(): { left(): string[] } {
  const before = counts();
  const jest: JestTimer[] = [];
  const hook = createHook({
    init(_id, type, _trigger, resource) {
      if (type === 'Timeout' && /node_modules[\\/]@jest[\\/]/.test(new Error().stack ?? '')) jest.push(resource as JestTimer);
    },
  }).enable();
  return {
    left() {
      hook.disable();
      const after = counts();
      const running = jest.filter((t) => !t._destroyed && t.hasRef()).length;
      if (running > 0) after.set('Timeout', (after.get('Timeout') ?? 0) - running);
      return [...after].filter(([type, n]) => n > (before.get(type) ?? 0)).map(([type, n]) => `${type} +${n - (before.get(type) ?? 0)}`);
    },
  };
}
