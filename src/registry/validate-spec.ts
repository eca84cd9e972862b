import type { ToolSpec } from '../../gen/dispatch/v1/tool_pb';
import { isJsonPointer } from '../json';

const NAME = /^[A-Za-z0-9_.:-]{1,128}$/;

/**
 * Checks a spec's fields other than its schema and returns the first problem, or undefined.
 * `knownExecutors` are the executor kinds this server can run.
 */
export function checkSpec(spec: ToolSpec, knownExecutors: ReadonlySet<string>): string | undefined {
  if (!NAME.test(spec.name)) {
    return `name ${JSON.stringify(spec.name)} must be 1-128 characters of letters, digits, '_', '.', ':' or '-'`;
  }
  const executor = spec.executor.case;
  if (executor === undefined) return `tool "${spec.name}" has no executor (one of http, worker, mcp, builtin)`;
  if (!knownExecutors.has(executor)) return `tool "${spec.name}": executor "${executor}" is not available on this server`;
  if (spec.executor.case === 'http') {
    let url: URL;
    try {
      url = new URL(spec.executor.value.url);
    } catch {
      return `tool "${spec.name}": http.url ${JSON.stringify(spec.executor.value.url)} is not a URL`;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      return `tool "${spec.name}": http.url must be http or https, got ${url.protocol}`;
    }
  }
  const retry = spec.retry;
  if (retry && (retry.jitter < 0 || retry.jitter > 1)) return `tool "${spec.name}": retry.jitter must be between 0 and 1`;
  if (retry && retry.backoffMultiplier !== 0 && retry.backoffMultiplier < 1) {
    return `tool "${spec.name}": retry.backoff_multiplier must be at least 1`;
  }
  for (const [field, pointer] of [
    ['resource_key', spec.resourceKey],
    ['primary_parameter', spec.primaryParameter],
    ...(spec.idempotency?.keyFields ?? []).map((p) => ['idempotency.key_fields', p] as const),
  ] as const) {
    if (!isJsonPointer(pointer)) return `tool "${spec.name}": ${field} ${JSON.stringify(pointer)} is not a JSON pointer`;
  }
  return undefined;
}
