import { realpathSync } from 'node:fs';
import { basename, dirname, join, posix } from 'node:path';
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
 * What may stand just before a path that begins there: the text's start, a space, a quote, a
 * bracket, `=`, `:` or `,` (`path=/tmp/a`, `open '/tmp/a'`), never a name (`/var/tmp` holds no `/tmp`).
 */
const PATH_START = String.raw`(?<=^|[\s'"\`=(\[{:,;<>|])`;
/** What may follow a directory's name where it ends: a `/`, the text's end, or a character no name holds. */
const PATH_END = String.raw`(?=$|[^\w.-]|\.(?![\w-]))`;

/** An absolute path in a text, from a boundary up to a space, a quote or a bracket; or a `file:` URL's (group 1). */
const PATH_OR_FILE_URL = new RegExp(String.raw`${PATH_START}(?:file:(?:\/\/(?:localhost)?)?(\/[^\s'"\`<>|]*)|\/[^\s'"\`<>|]*)`, 'g');

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `path` read as it names a file: `.` and `..` and doubled slashes taken out (a URL's path also decoded); undefined when it cannot be. */
const plainPath = (path: string, url: boolean): string | undefined => {
  try {
    return posix.normalize(url ? decodeURIComponent(path) : path);
  } catch {
    return undefined;
  }
};

/** `path` written from `name` when it is `dir` or inside it. */
const under = (path: string, dir: string, name: string): string | undefined =>
  path === dir ? name : path.startsWith(`${dir}/`) ? `${name}${path.slice(dir.length)}` : undefined;

/**
 * `text` with each path spelt another way than `dirs` are (`dir/../dir/a`, `dir//a`, a `file:` URL,
 * percent-encoded or not) that names one of them, or one of `bases` (the directory their roots are
 * in), written from {@link SCRATCH_DIR_NAME} or {@link SCRATCH_ROOT_NAME}, its `.` and `..`
 * resolved. Only a path that begins at a boundary (see `PATH_START`) is read.
 */
function hideOtherSpellings(text: string, dirs: readonly string[], bases: readonly string[]): string {
  return text.replace(PATH_OR_FILE_URL, (match: string, urlPath: string | undefined) => {
    if (urlPath === undefined && !/\/\.{1,2}(?:\/|$)|\/\//.test(match)) return match;
    const path = plainPath(urlPath ?? match, urlPath !== undefined);
    if (path === undefined) return match;
    for (const dir of dirs) {
      const hidden = under(path, dir, SCRATCH_DIR_NAME);
      if (hidden !== undefined) return hidden;
    }
    for (const base of bases) {
      const hidden = under(path, base, SCRATCH_ROOT_NAME);
      if (hidden !== undefined) return hidden;
    }
    return match;
  });
}

/**
 * `text` with each of `dirs` (sessions' scratch directories, `<dir>/dispatch-scratch-XXXXXX/<name>`)
 * written {@link SCRATCH_DIR_NAME}, and the directory their roots are in {@link SCRATCH_ROOT_NAME}:
 * a file of the session reads `<scratch>/notes/a.txt`, and no absolute path of the server is left.
 * Each is also matched through its root's real path (fs.realpath of a symlinked base), and, from a
 * boundary (see `PATH_START`), spelt with `..`, `.` or doubled slashes, and as a `file:` URL
 * (`file:///tmp/.../a%20b.txt` reads `<scratch>/a b.txt`). For errors: a directory or the root
 * named anywhere in a message is the server's. What a built-in returns is {@link hideScratchOutput}'s.
 */
export function hideScratchPaths(text: string, dirs: readonly string[]): string {
  const all = dirs.flatMap(spellings);
  let hidden = hideOtherSpellings(text, all, [...new Set(all.map((dir) => dirname(dirname(dir))))]);
  for (const dir of all) hidden = hidden.split(dir).join(SCRATCH_DIR_NAME);
  for (const dir of all) hidden = hideScratchRoot(hidden, dirname(dirname(dir)));
  return hidden;
}

/**
 * What a built-in returned with only `dirs` (the directories it was given in that call) written
 * {@link SCRATCH_DIR_NAME}: each as it was given or through its root's real path, from a boundary
 * (see `PATH_START`) to a `/` or the end of its name, and spelt with `..`, `.`, doubled slashes or
 * as a `file:` URL. Output is the tool's content (a file it read, a listing): the shared root
 * (`/tmp` by default) and paths outside `dirs` (`/tmp/input.csv`, `/var/tmp/x`, `file:///tmp/a`)
 * are content, left as they are.
 */
export function hideScratchOutput(text: string, dirs: readonly string[]): string {
  const all = [...new Set(dirs.flatMap(spellings))].sort((a, b) => b.length - a.length);
  if (all.length === 0) return text;
  const named = new RegExp(`${PATH_START}(?:${all.map(escapeRegExp).join('|')})${PATH_END}`, 'g');
  return hideOtherSpellings(text, all, []).replace(named, SCRATCH_DIR_NAME);
}

/**
 * What a built-in threw, with {@link hideScratchPaths} applied to the message (and a DispatchError's
 * suggestion) the model and the client read; the error itself when it names none of `dirs`. A
 * rewritten error keeps the original as its `cause` (logged, never sent) and its kind and phase.
 * What a built-in returns is {@link hideScratchOutput}'s (see builtin-executor.ts).
 */
export function withoutScratchPaths(error: unknown, dirs: readonly string[]): unknown {
  // Duck-typed: Node's own errors are not instances of another realm's Error (a vm context, jest).
  if (dirs.length === 0 || typeof (error as Error | undefined)?.message !== 'string') return error;
  const message = hideScratchPaths((error as Error).message, dirs);
  if (!(error instanceof DispatchError)) return message === (error as Error).message ? error : new Error(message, { cause: error });
  const suggestion = error.suggestion === undefined ? undefined : hideScratchPaths(error.suggestion, dirs);
  if (message === error.message && suggestion === error.suggestion) return error;
  return error.retold(message, { suggestion });
}
