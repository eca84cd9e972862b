import { realpathSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
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

/** Each scratch root (made by scratch-dirs.ts) whose real path, symlinks resolved, is another: a built-in may name either. */
const realRoots = new Map<string, string>();

/** Notes the real path of a scratch root just made (once: a symlinked ScratchDirsOptions.dir, macOS's /var -> /private/var). */
export function noteRealRoot(root: string): void {
  try {
    const real = realpathSync(root);
    if (real !== root) realRoots.set(root, real);
  } catch {
    // Gone already: nothing in it can be named.
  }
}

/** Forgets a root removed. */
export function forgetRealRoot(root: string): void {
  realRoots.delete(root);
}

/** A session's directory as it was given, and through its root's real path if that differs. */
const spellings = (dir: string): string[] => {
  const real = realRoots.get(dirname(dir));
  return real === undefined ? [dir] : [dir, join(real, basename(dir))];
};

/**
 * `text` with each of `dirs` (sessions' scratch directories, `<dir>/dispatch-scratch-XXXXXX/<name>`)
 * written {@link SCRATCH_DIR_NAME}, and the directory their roots are in {@link SCRATCH_ROOT_NAME}:
 * a file of the session reads `<scratch>/notes/a.txt`, and no absolute path of the server is left.
 * Each is also matched through its root's real path (fs.realpath of a symlinked base).
 */
export function hideScratchPaths(text: string, dirs: readonly string[]): string {
  let hidden = text;
  const all = dirs.flatMap(spellings);
  for (const dir of all) hidden = hidden.split(dir).join(SCRATCH_DIR_NAME);
  for (const dir of all) hidden = hideScratchRoot(hidden, dirname(dirname(dir)));
  return hidden;
}

/**
 * What a built-in threw, with {@link hideScratchPaths} applied to the message (and a DispatchError's
 * suggestion) the model and the client read; the error itself when it names none of `dirs`. A
 * rewritten error keeps the original as its `cause` (logged, never sent) and its kind and phase.
 * Only thrown errors are rewritten: output a built-in returns (an error's text in it included) is sent as it is.
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
