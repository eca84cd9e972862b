import { Effect, type ToolSpec } from '../../gen/dispatch/v1/tool_pb';
import { httpHeadersProblem } from '../executors/http-headers';
import { isJsonPointer } from '../json';
import { shortened } from '../pipeline/bound-result';
import { specSizeProblem } from './spec-bounds';
import { specRuleProblem } from './spec-rules';

/** The longest tool name: a name sent that is longer names no tool. */
export const MAX_TOOL_NAME_CHARS = 128;
const NAME = new RegExp(`^[A-Za-z0-9_.:-]{1,${MAX_TOOL_NAME_CHARS}}$`);
/** A caller's text (a name, URL or pointer) quoted in a message: it may be megabytes. */
const quoted = (text: string): string => JSON.stringify(shortened(text, 200));
/**
 * The longest backoff between attempts: a longer one waits past any sensible deadline, and past
 * 2^31 ms Node's timers fire at once (TimeoutOverflowWarning), so a 23-day backoff retried in 1 ms.
 */
const MAX_BACKOFF_MS = 3_600_000;
const MAX_MULTIPLIER = 100;
/**
 * The longest a tool's idempotency records and stored full results may be kept: 30 days. They hold
 * its outputs (user data), and a tenant registering a tool chose it alone: a privacy review kept
 * outputs for 100 years with `ttl_seconds: 3153600000`.
 */
export const MAX_IDEMPOTENCY_TTL_SECONDS = 30 * 24 * 3600;
/** The least `max_result_chars`: a bounded result holds its omission marker and some of the output. */
const MIN_RESULT_CHARS = 100;

/**
 * Checks a spec's fields other than its schema and returns the first problem, or undefined; last,
 * the sizes of its free-form fields ({@link specSizeProblem}), once each reads as it should, and
 * the settings that contradict each other or the service ({@link specRuleProblem}).
 * `knownExecutors` are the executor kinds this server can run; `local` false skips the sizes and
 * the rules (another replica's tool, which may predate them: see {@link keptDespite}).
 */
export function checkSpec(spec: ToolSpec, knownExecutors: ReadonlySet<string>, local = true): string | undefined {
  if (!NAME.test(spec.name)) {
    return `name ${quoted(spec.name)} must be 1-${MAX_TOOL_NAME_CHARS} characters of letters, digits, '_', '.', ':' or '-'`;
  }
  const executor = spec.executor.case;
  if (executor === undefined) return `tool "${spec.name}" has no executor (one of http, worker, mcp, builtin)`;
  if (!knownExecutors.has(executor)) return `tool "${spec.name}": executor "${executor}" is not available on this server`;
  if (spec.executor.case === 'http') {
    let url: URL;
    try {
      url = new URL(spec.executor.value.url);
    } catch {
      return `tool "${spec.name}": http.url ${quoted(spec.executor.value.url)} is not a URL`;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      return `tool "${spec.name}": http.url must be http or https, got ${url.protocol}`;
    }
    const headers = httpHeadersProblem(spec.executor.value.headers);
    if (headers) return `tool "${spec.name}": ${headers}`;
  }
  const retry = spec.retry;
  // Negated comparisons, so that NaN (a float field may carry it) is refused too.
  if (retry && !(retry.jitter >= 0 && retry.jitter <= 1)) return `tool "${spec.name}": retry.jitter must be between 0 and 1`;
  if (retry && retry.backoffMultiplier !== 0 && !(retry.backoffMultiplier >= 1 && retry.backoffMultiplier <= MAX_MULTIPLIER)) {
    return `tool "${spec.name}": retry.backoff_multiplier must be between 1 and ${MAX_MULTIPLIER}`;
  }
  for (const [field, value] of [['retry.initial_backoff_ms', retry?.initialBackoffMs ?? 0], ['retry.max_backoff_ms', retry?.maxBackoffMs ?? 0], ['loop.assumed_wait_ms', spec.loop?.assumedWaitMs ?? 0]] as const) {
    if (value > MAX_BACKOFF_MS) return `tool "${spec.name}": ${field} must be at most ${MAX_BACKOFF_MS} (an hour), got ${value}`;
  }
  const ttl = spec.idempotency?.ttlSeconds ?? 0;
  if (ttl > MAX_IDEMPOTENCY_TTL_SECONDS) {
    return `tool "${spec.name}": idempotency.ttl_seconds must be at most ${MAX_IDEMPOTENCY_TTL_SECONDS} (30 days: records and stored results hold the tool's outputs that long), got ${ttl}`;
  }
  // Accepted silently, it would read as if it turned off something that was never on (the effect
  // unspecified is side-effecting too).
  if (spec.skipMemoize && spec.effect !== Effect.READ_ONLY) {
    return `tool "${spec.name}": skip_memoize applies to read-only tools: a side-effecting tool is never memoized; remove it`;
  }
  if (spec.maxResultChars !== 0 && spec.maxResultChars < MIN_RESULT_CHARS) {
    return `tool "${spec.name}": max_result_chars must be at least ${MIN_RESULT_CHARS} (the omission marker alone takes up to 60), got ${spec.maxResultChars}`;
  }
  for (const [field, pointer] of [
    ['resource_key', spec.resourceKey],
    ['primary_parameter', spec.primaryParameter],
    ...(spec.idempotency?.keyFields ?? []).map((p) => ['idempotency.key_fields', p] as const),
  ] as const) {
    if (!isJsonPointer(pointer)) return `tool "${spec.name}": ${field} ${quoted(pointer)} is not a JSON pointer`;
  }
  const problem = local ? specSizeProblem(spec) ?? specRuleProblem(spec) : undefined;
  return problem === undefined ? undefined : `tool "${spec.name}": ${problem}`;
}

/**
 * What another replica's tool is kept despite, to log: a field past its bound, or a rule this
 * version added. Refused, such a tool vanished on every upgraded replica while older ones served
 * it, and RemoveTool could not reach it; a registration here is refused (checkSpec).
 */
export function keptDespite(spec: ToolSpec): { readonly message: string; readonly problem: string } | undefined {
  const size = specSizeProblem(spec);
  if (size !== undefined) return { message: 'a tool from another replica is past a spec field bound and kept; register it again within the bound', problem: size };
  const rule = specRuleProblem(spec);
  return rule === undefined ? undefined : { message: 'a tool from another replica breaks a rule of this version and is kept; register it again as the problem says', problem: rule };
}

/**
 * Whether any of `specs` is an MCP server's tool: its schema is taken as its server wrote it, not
 * refused for mistakes (an input schema that accepts no object, a misspelt keyword: see
 * createSchemaCodegen). The tool is a third party's, imported whole or not at all, and it served
 * before these checks: refused, it vanished from the model's tools on upgrade.
 */
export const fromMcp = (specs: readonly ToolSpec[]): boolean => specs.some((spec) => spec.executor.case === 'mcp');
