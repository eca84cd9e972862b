import type { ToolSpec } from '../../gen/dispatch/v1/tool_pb';
import { MAX_RECOVERY_ATTEMPTS, TOOL_DEFAULTS } from '../options';
import { FETCH_BAD_PORTS } from './fetch-bad-ports';
import { pointerNameProblem } from './pointer-names';

/**
 * The first setting of `spec` that contradicts itself or the service, as a refusal's words after
 * `tool "NAME": `; or undefined. Each loaded before, and then did something else than it said:
 * - `retry.max_attempts` past the ceiling of attempts per call (DESIGN section 4; it counts the
 *   first attempt): the attempt past it ended the whole RPC RECOVERY_EXHAUSTED, the turn lost;
 * - `retry.initial_backoff_ms` over `max_backoff_ms` (given, or its default): every wait is cut to
 *   max_backoff_ms, so the first is not what was asked for;
 * - `fallback_tool` naming the tool itself: a call never falls back to a tool it ran on;
 * - an `http.url` at a port fetch never connects to (see FETCH_BAD_PORTS): every call failed;
 * - a `primary_parameter` or `resource_key` naming a property its input schema does not declare
 *   (see pointerNameProblem): it read nothing in any call. Not for an MCP tool, whose schema is
 *   taken as its server wrote it (fromMcp): the registry warns of it instead.
 * checkSpec has checked the fields' own values first (the URL, backoffs within an hour, pointers).
 */
export function specRuleProblem(spec: ToolSpec): string | undefined {
  const retry = spec.retry;
  if (retry !== undefined && retry.maxAttempts > MAX_RECOVERY_ATTEMPTS) {
    return `retry.max_attempts is ${retry.maxAttempts}, over the limit of ${MAX_RECOVERY_ATTEMPTS}: a call runs at most ${MAX_RECOVERY_ATTEMPTS} attempts in all (the first included), and one needing more ends the whole RPC RECOVERY_EXHAUSTED`;
  }
  const initial = retry?.initialBackoffMs ?? 0;
  const givenMax = retry?.maxBackoffMs ?? 0;
  const max = givenMax === 0 ? TOOL_DEFAULTS.maxBackoffMs : givenMax;
  if (initial > max) {
    const which = givenMax === 0 ? `${max}, its default` : `${max}`;
    return `retry.initial_backoff_ms (${initial}) is more than retry.max_backoff_ms (${which}): every wait is cut to max_backoff_ms; lower initial_backoff_ms or raise max_backoff_ms`;
  }
  if (spec.fallbackTool !== '' && spec.fallbackTool === spec.name) {
    return 'fallback_tool names the tool itself: a fallback is another tool, run when this one fails, and a call never falls back to a tool it ran on; name another tool, or leave fallback_tool out';
  }
  const port = spec.executor.case === 'http' && URL.canParse(spec.executor.value.url) ? new URL(spec.executor.value.url).port : '';
  if (FETCH_BAD_PORTS.has(port)) {
    return `http.url's port ${port} is one fetch refuses to connect to (a "bad port" of the Fetch standard, reserved for other protocols' services): every call would fail before anything is sent; serve the tool on another port`;
  }
  return spec.executor.case === 'mcp' ? undefined : pointerNameProblem(spec);
}
