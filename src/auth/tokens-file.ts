import { readFileSync, statSync } from 'node:fs';
import { ConfigError, parseTokens, yamlValue, type TokenEntry } from '../config';
import type { Logger } from '../log';

/** Reads a tokens file: a YAML list of `{tenant, scopes, sha256}`. Throws a ConfigError naming the file. */
export function readTokensFile(file: string): TokenEntry[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(file, '', `cannot read the tokens file (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  const raw = yamlValue(text, file);
  if (raw !== null && raw !== undefined && !Array.isArray(raw)) throw new ConfigError(file, '', 'the tokens file must be a YAML list of {tenant, scopes, sha256}');
  return parseTokens(file, 'tokens', raw);
}

/** Options of {@link watchTokensFile}. */
export interface WatchOptions {
  /** How often the file is re-stat'ed, in ms. @default 2000 */
  readonly intervalMs?: number;
  /**
   * How long a changed file must stay unchanged after it was read for what was read to be taken,
   * in ms. A file rewritten in place (`cat > tokens.yaml`, an editor saving) is empty or cut for a
   * moment: read then, it took every token away (each call UNAUTHENTICATED until the next check,
   * 2 s later). A file still changing is read again at the next check. @default 100
   */
  readonly settleMs?: number;
  readonly logger: Logger;
}

const fingerprint = (file: string): string => {
  try {
    const s = statSync(file);
    return `${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`;
  } catch {
    return 'missing';
  }
};

/**
 * Re-reads `file` whenever its stat changes (a Kubernetes Secret mount swaps a symlink) and hands
 * the new entries to `onChange` once the file has stayed unchanged for `settleMs` after the read.
 * A file that is missing or invalid, or whose entries `onChange` throws on, keeps the previous
 * entries and logs a warning. Returns the function that stops watching.
 */
export function watchTokensFile(file: string, onChange: (entries: TokenEntry[]) => void, options: WatchOptions): () => void {
  let last = fingerprint(file);
  let settling: NodeJS.Timeout | undefined;
  const timer = setInterval(() => {
    const now = fingerprint(file);
    if (now === last || settling) return;
    let entries: TokenEntry[];
    try {
      entries = readTokensFile(file);
    } catch (error) {
      last = now;
      options.logger.warn('auth tokens file unreadable or invalid; keeping the previous tokens', { file, error: (error as Error).message });
      return;
    }
    settling = setTimeout(() => {
      settling = undefined;
      // Changed since it was read: taken at a later check, once it holds still.
      if (fingerprint(file) !== now) return;
      last = now;
      try {
        onChange(entries);
      } catch (error) {
        // The entries may parse yet not make a table (one sha256 for two tenants): refused as an
        // invalid file is. Thrown from this timer, it would end the process.
        options.logger.warn('auth tokens file unreadable or invalid; keeping the previous tokens', { file, error: (error as Error).message });
        return;
      }
      options.logger.info('auth tokens reloaded', { file, tokens: entries.length });
    }, options.settleMs ?? 100);
    settling.unref();
  }, options.intervalMs ?? 2000);
  timer.unref();
  return () => {
    clearInterval(timer);
    clearTimeout(settling);
  };
}
