// dispatchd's reason for not starting is one JSON line at error level, the last of its stderr
// (src/cli/startup-failure.ts): `message` is the text it printed before, `code` names what failed.

/** The start-up failure line, parsed. */
export type StartupLine = Record<string, unknown>;

/**
 * The start-up failure line of `stderr`: its last line, parsed as JSON (one that is not JSON fails
 * the test). With `only`, nothing else in stderr is a failure or unreadable: every line is a JSON
 * log line, and none before the last is at error level (an info line of start-up, such as
 * `trace export off`, may come before it; a stack trace or a second error may not).
 */
export function startupLine(stderr: string, { only = false }: { only?: boolean } = {}): StartupLine {
  expect(stderr).toMatch(/\n$/);
  const lines = stderr.slice(0, -1).split('\n').map((line) => {
    try {
      return JSON.parse(line) as StartupLine;
    } catch {
      return line;
    }
  });
  const last = lines.at(-1)!;
  if (typeof last === 'string') throw new Error(`the last stderr line is not JSON: ${last}`);
  if (only) expect(lines.slice(0, -1).filter((line) => typeof line === 'string' || line.level === 'error')).toEqual([]);
  return last;
}

/** A run refused at start, to compare in one expect: its exit code, and its failure line's level, code and message. */
export interface FailedStart {
  readonly exit: number | null;
  readonly level: unknown;
  readonly code: unknown;
  readonly message: unknown;
}

/** `run`'s exit code and start-up failure line (whose exitCode must be the code it exited with); `only` as startupLine's. */
export function failedStart(run: { code: number | null; stderr: string }, options?: { only?: boolean }): FailedStart {
  const line = startupLine(run.stderr, options);
  expect(line.exitCode).toBe(run.code);
  return { exit: run.code, level: line.level, code: line.code, message: line.message };
}
