import type { MessageInitShape } from '@bufbuild/protobuf';
import { DispatchMode, type DispatchRequestSchema } from '../../gen/dispatch/v1/dispatch_pb';
import { unknownKeyProblem } from '../config/unknown-key';
import { FileError, readText, uint32Argument } from './usage';

/** A turn as `dispatchctl dispatch FILE` reads it (snake_case, arguments as JSON or as text). */
interface TurnFile {
  readonly session_id?: string;
  readonly turn?: unknown;
  readonly mode?: unknown;
  readonly max_concurrency?: unknown;
  readonly calls?: unknown;
  readonly offered_tools?: unknown;
  readonly interactive?: unknown;
}

/** The keys of a turn file, and of each of its calls: another (`"args"`, `"sessionId"`) was silently dropped. */
const TURN_KEYS = ['session_id', 'turn', 'mode', 'max_concurrency', 'calls', 'offered_tools', 'interactive'];
const CALL_KEYS = ['id', 'name', 'arguments'];

/** Throws a FileError naming the first key of `value` not in `known`, with its path and the key likely meant. */
function refuseUnknownKeys(value: object, known: readonly string[], file: string, prefix: string): void {
  const unknown = Object.keys(value).find((key) => !known.includes(key));
  if (unknown !== undefined) throw new FileError(`${file}: ${prefix}${unknown}: ${unknownKeyProblem(unknown, known)}`);
}

/** The modes a turn file may name: short, or as the proto names them, in any case. */
const MODES: Readonly<Record<string, DispatchMode>> = {
  parallel: DispatchMode.PARALLEL,
  dispatch_mode_parallel: DispatchMode.PARALLEL,
  sequential: DispatchMode.SEQUENTIAL,
  dispatch_mode_sequential: DispatchMode.SEQUENTIAL,
};

/** The turn's mode: `--parallel` wins; an unknown name is refused (it ran sequential, silently). */
function modeOf(mode: unknown, file: string, parallel: boolean): DispatchMode {
  if (parallel) return DispatchMode.PARALLEL;
  if (mode === undefined) return DispatchMode.SEQUENTIAL;
  const known = typeof mode === 'string' && Object.hasOwn(MODES, mode.toLowerCase()) ? MODES[mode.toLowerCase()] : undefined;
  if (known === undefined) throw new FileError(`${file}: "mode" must be "parallel" or "sequential" (or DISPATCH_MODE_PARALLEL, DISPATCH_MODE_SEQUENTIAL), got ${JSON.stringify(mode)}`);
  return known;
}

/** `offered_tools`: a list of tool names, none when absent. */
function offeredTools(value: unknown, file: string): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((name) => typeof name !== 'string')) throw new FileError(`${file}: "offered_tools" must be a list of tool names, got ${JSON.stringify(value)}`);
  return value as string[];
}

/**
 * `interactive`: true makes an ask policy's call wait for `dispatchctl approvals resolve` (or
 * another approver) instead of being refused.
 */
function interactiveOf(value: unknown, file: string): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw new FileError(`${file}: "interactive" must be true or false, got ${JSON.stringify(value)}`);
  return value;
}

/**
 * A uint32 field of the turn file (`turn`, `max_concurrency`); one that does not fit is the file's
 * fault, not the command line's.
 */
function uint32Field(value: unknown, file: string, field: string): number {
  try {
    return uint32Argument(value, `${file}: "${field}"`);
  } catch (error) {
    throw new FileError((error as Error).message);
  }
}

/** The JSON text of the turn file, parsed; a syntax error, or a value that is no object, names the file. */
function parseTurn(text: string, file: string): TurnFile {
  let turn: unknown;
  try {
    turn = JSON.parse(text);
  } catch (error) {
    throw new FileError(`${file}: not valid JSON: ${(error as Error).message}`);
  }
  if (turn === null || typeof turn !== 'object' || Array.isArray(turn)) throw new FileError(`${file}: must hold a JSON object {"session_id","calls":[...],"mode"}`);
  refuseUnknownKeys(turn, TURN_KEYS, file, '');
  return turn as TurnFile;
}

/**
 * The DispatchRequest in `file` (`-` reads standard input). A file that cannot be read, numbers
 * that do not fit their uint32 fields, a missing `calls` list, an unknown key or mode,
 * `offered_tools` that is no list of names, `interactive` that is no boolean and text that is no
 * JSON object throw a FileError naming the file and the field (exit 1, as the README says of a
 * file that cannot be used: they were usage errors, exit 2 with the whole usage text, which is
 * about the command line).
 */
export function readTurnFile(file: string, defaults: { readonly sessionId: string; readonly parallel: boolean }): MessageInitShape<typeof DispatchRequestSchema> {
  const turn = parseTurn(readText(file), file);
  if (!Array.isArray(turn.calls)) throw new FileError(`${file}: "calls" must be a list of {"id","name","arguments"}`);
  const calls = (turn.calls as unknown[]).map((call, i) => {
    if (call === null || typeof call !== 'object' || Array.isArray(call)) throw new FileError(`${file}: calls[${i}] must be an object {"id","name","arguments"}`);
    refuseUnknownKeys(call, CALL_KEYS, file, `calls[${i}].`);
    const c = call as { id?: string; name: string; arguments: unknown };
    return { id: c.id ?? `call_${i + 1}`, name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments ?? {}) };
  });
  return {
    sessionId: turn.session_id ?? defaults.sessionId,
    turn: uint32Field(turn.turn ?? 0, file, 'turn'),
    calls,
    mode: modeOf(turn.mode, file, defaults.parallel),
    maxConcurrency: uint32Field(turn.max_concurrency ?? 0, file, 'max_concurrency'),
    offeredTools: offeredTools(turn.offered_tools, file),
    interactive: interactiveOf(turn.interactive, file),
  };
}
