/** Where GetToolStats reads a tool's breaker state and health score. */
export interface ToolHealthSource {
  /** `closed`, `open` or `half_open`. */
  state(tool: string): string;
  /** 0..1, 1 is healthy. */
  healthScore(tool: string): number;
}

/** True when `value` has the methods of a health source (a breaker set may offer them). */
export function isHealthSource(value: unknown): value is ToolHealthSource {
  const v = value as Partial<ToolHealthSource> | undefined;
  return typeof v?.state === 'function' && typeof v.healthScore === 'function';
}

const SCORE: Readonly<Record<string, number>> = { closed: 1, half_open: 0.5, open: 0 };

/** A health source built from the BREAKER_STATE changes seen; tools never seen are closed. */
export function createObservedHealth(): ToolHealthSource & { observe(tool: string, state: string): void; forget(tool: string): void; states(): ReadonlyMap<string, string> } {
  const states = new Map<string, string>();
  return {
    states: () => states,
    observe(tool, state) {
      states.set(tool, state);
    },
    forget(tool) {
      states.delete(tool);
    },
    state: (tool) => states.get(tool) ?? 'closed',
    healthScore: (tool) => SCORE[states.get(tool) ?? 'closed'] ?? 1,
  };
}
