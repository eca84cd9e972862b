import { readFileSync } from 'node:fs';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { DispatchMode, type DispatchRequestSchema } from '../../gen/dispatch/v1/dispatch_pb';
import { uint32Argument, UsageError } from './usage';

/** A turn as `dispatchctl dispatch FILE` reads it (snake_case, arguments as JSON or as text). */
interface TurnFile {
  readonly session_id?: string;
  readonly turn?: unknown;
  readonly mode?: string;
  readonly max_concurrency?: unknown;
  readonly calls?: unknown;
}

/**
 * The DispatchRequest in `file` (`-` reads standard input). Numbers that do not fit their uint32
 * fields and a missing `calls` list are usage errors naming the file and the field.
 */
export function readTurnFile(file: string, defaults: { readonly sessionId: string; readonly parallel: boolean }): MessageInitShape<typeof DispatchRequestSchema> {
  const turn = JSON.parse(readFileSync(file === '-' ? 0 : file, 'utf8')) as TurnFile;
  if (!Array.isArray(turn.calls)) throw new UsageError(`${file}: "calls" must be a list of {"id","name","arguments"}`);
  const calls = (turn.calls as { id?: string; name: string; arguments: unknown }[]).map((c, i) => ({
    id: c.id ?? `call_${i + 1}`,
    name: c.name,
    arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments ?? {}),
  }));
  return {
    sessionId: turn.session_id ?? defaults.sessionId,
    turn: uint32Argument(turn.turn ?? 0, `${file}: "turn"`),
    calls,
    mode: defaults.parallel || turn.mode === 'parallel' ? DispatchMode.PARALLEL : DispatchMode.SEQUENTIAL,
    maxConcurrency: uint32Argument(turn.max_concurrency ?? 0, `${file}: "max_concurrency"`),
  };
}
