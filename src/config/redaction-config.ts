import type { RedactionWorkerOptions } from '../middleware';
import { checkInteger, MAX_TIMER_MS, type IntegerRange } from '../options';
import { ConfigError } from './config-error';
import { unknownKeyProblem } from './unknown-key';

/**
 * The `redaction:` section's keys, by their RedactionWorkerOptions names, and the range each must
 * be in. They bound the thread that redacts outputs past 32 Ki characters (INLINE_REDACTION_CHARS,
 * src/middleware/redaction-worker.ts); left out, the worker's own defaults apply.
 */
const KEYS: Readonly<Record<string, { readonly name: keyof RedactionWorkerOptions; readonly range: Required<IntegerRange> }>> = {
  // Below 100 ms, outputs just past the 32 Ki characters sent to the thread (~40 ms of the slowest
  // text) could fail on a busy host; past 10 min one output holds every other waiting behind it.
  thread_timeout_ms: { name: 'timeoutMs', range: { min: 100, max: 600_000 } },
  // Shorter, the thread would end and start again (~150 ms, off the event loop) between outputs
  // close together; Node runs a longer timer at once.
  thread_idle_ms: { name: 'idleMs', range: { min: 1_000, max: MAX_TIMER_MS } },
  // Below 64 MB the thread fails on ordinary outputs of a few MiB; 4096 MB is more than any output
  // up to max_tool_output_chars needs.
  thread_heap_mb: { name: 'heapMb', range: { min: 64, max: 4_096 } },
  // Side-effecting calls' outputs kept past their calls' ends (cut off while waiting for the thread
  // or in it), so that their answers replace OUTCOME_UNKNOWN: 0 keeps none (such a record says the
  // answer was withheld); 256 Mi characters is ~512 MiB of text held, the most a pod should.
  late_jobs_max_chars: { name: 'lateMaxChars', range: { min: 0, max: 256 * 1024 * 1024 } },
};

/** The `redaction:` section: the bounds of the redaction worker's thread (RedactionWorkerOptions). */
export type RedactionConfig = RedactionWorkerOptions;

/**
 * Parses the `redaction:` section, `{ thread_timeout_ms, thread_idle_ms, thread_heap_mb,
 * late_jobs_max_chars }`: how long the redaction thread may redact one output, how long it lives
 * idle, its old space in MB, and the characters of cut-off side-effecting calls' outputs it keeps
 * redacting after their calls ended. Each value must be an integer in its range; a bad one stops
 * the start, naming the key.
 */
export function parseRedactionConfig(file: string, raw: unknown): RedactionConfig {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new ConfigError(file, 'redaction', 'must be a mapping');
  const out: Record<string, number> = {};
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
    const spec = Object.hasOwn(KEYS, key) ? KEYS[key] : undefined;
    if (!spec) throw new ConfigError(file, `redaction.${key}`, unknownKeyProblem(key, Object.keys(KEYS)));
    try {
      out[spec.name] = checkInteger(key, value, spec.range);
    } catch (error) {
      // `must be an integer from 100 to 600000, got 50`, as the limits say it.
      throw new ConfigError(file, `redaction.${key}`, (error as Error).message.slice(key.length + 1));
    }
  }
  return out as RedactionConfig;
}
