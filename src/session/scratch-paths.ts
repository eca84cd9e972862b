import { dirname, join } from 'node:path';
import { DispatchError } from '../errors';

/** What a session's scratch directory is called in a built-in's error: its path is the server's. */
export const SCRATCH_DIR_NAME = '<scratch>';
/** What the directory holding every process's scratch root (ScratchDirsOptions.dir) is called there. */
export const SCRATCH_ROOT_NAME = '<scratch root>';

/** `text` with each path in `base` (ScratchDirsOptions.dir) written `<scratch root>/...`. */
export function hideScratchRoot(text: string, base: string): string {
  // A path in it, never the bare name (which a relative one, `scratch`, would match in any word).
  return text.split(join(base, '/')).join(`${SCRATCH_ROOT_NAME}/`);
}

/**
 * `text` with each of `dirs` (sessions' scratch directories, `<dir>/dispatch-scratch-XXXXXX/<name>`)
 * written {@link SCRATCH_DIR_NAME}, and the directory their roots are in {@link SCRATCH_ROOT_NAME}:
 * a file of the session reads `<scratch>/notes/a.txt`, and no absolute path of the server is left.
 */
export function hideScratchPaths(text: string, dirs: readonly string[]): string {
  let hidden = text;
  for (const dir of dirs) hidden = hidden.split(dir).join(SCRATCH_DIR_NAME);
  for (const dir of dirs) hidden = hideScratchRoot(hidden, dirname(dirname(dir)));
  return hidden;
}

/**
 * What a built-in threw, with {@link hideScratchPaths} applied to the message (and a DispatchError's
 * suggestion) the model and the client read; the error itself when it names none of `dirs`. A
 * rewritten error keeps the original as its `cause` (logged, never sent) and its kind and phase.
 */
export function withoutScratchPaths(error: unknown, dirs: readonly string[]): unknown {
  // Duck-typed: Node's own errors are not instances of another realm's Error (a vm context, jest).
  if (dirs.length === 0 || typeof (error as Error | undefined)?.message !== 'string') return error;
  const message = hideScratchPaths((error as Error).message, dirs);
  if (!(error instanceof DispatchError)) return message === (error as Error).message ? error : new Error(message, { cause: error });
  const suggestion = error.suggestion === undefined ? undefined : hideScratchPaths(error.suggestion, dirs);
  if (message === error.message && suggestion === error.suggestion) return error;
  const { kind, phase, recoverable, retryAfterMs, httpStatus } = error;
  return new DispatchError(kind, message, { phase, recoverable, suggestion, retryAfterMs, httpStatus, cause: error });
}
