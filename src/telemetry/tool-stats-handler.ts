import { create, toBinary } from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import { GetToolStatsResponseSchema, ToolRatesSchema, ToolStatsSchema, type GetToolStatsRequest, type GetToolStatsResponse, type ToolStats as ToolStatsMessage } from '../../gen/dispatch/v1/registry_pb';
import type { Logger } from '../log';
import { terminalText } from '../events/terminal-text';
import { callBreakerKey, shortened } from '../pipeline';
import type { ToolRegistry } from '../registry';
import { MAX_TOOL_NAME_CHARS } from '../registry/validate-spec';
import { namePage, pageAfter, RpcError, unary, type Authenticator } from '../server';
import { alertsOf, RATE_THRESHOLDS } from './rate-alerts';
import { localStatsReader, ratesOf, type TenantCounts, type ToolStats, type ToolStatsReader } from './tool-stats';
import type { ToolHealthSource } from './tool-health';

/** What GetToolStats needs; the late-bound parts exist once the app is assembled. */
export interface ToolStatsHandlerOptions {
  /** This replica's counts. */
  readonly stats: ToolStats;
  /** Every replica's counts, when replicas share them through Redis; read instead of `stats`. */
  readonly shared?: ToolStatsReader;
  readonly registry: () => ToolRegistry | undefined;
  readonly health: () => ToolHealthSource;
  readonly authenticate: () => Authenticator;
  readonly logger: Logger;
  /** The largest answer, in bytes (limits.max_response_bytes): every tool's stats come a page at a time. @default 4194304 */
  readonly maxResponseBytes?: number;
}

const THRESHOLDS = create(ToolRatesSchema, RATE_THRESHOLDS);

// The name is the client's own text, echoed as other ids are: cut (never through a surrogate pair), its invisible characters escaped.
const notFound = (tool: string) => new RpcError(grpc.status.NOT_FOUND, `tool "${terminalText(shortened(tool, 200))}" is not registered and has no recorded calls`, 'TOOL_NOT_FOUND', { tool });

/** Response header: `service` when the counts cover every replica sharing Redis, `replica` when only the one that answered. */
export const STATS_SCOPE_HEADER = 'dispatch-stats-scope';
/** Response header, present when the counts reach less far than they should, saying why. */
export const STATS_WARNING_HEADER = 'dispatch-stats-warning';

/**
 * GetToolStats: per tool of the caller's tenant (its own tools and the shared ones), the calls,
 * the six rates and the error rate over the recent window (`telemetry.rate_window_seconds`, rate-window.ts) and over
 * every call, the window's calls, breaker state, health score, the rates past their alert thresholds and the thresholds. An
 * empty `tool` means every tool registered (counts of a name no longer registered are not listed: a
 * removed tool's are deleted, and what is left of them, an operator's tool gone, say, stays out),
 * a page at a time by name (namePage: at most page_size, within max_response_bytes);
 * a name that is neither registered nor counted is NOT_FOUND.
 * With Redis, calls and rates cover every replica's calls (up to each one's last flush, plus this
 * replica's unflushed calls); breaker state and health score are this replica's own, as each
 * replica keeps its own breaker per tool. The `dispatch-stats-scope` header says which counts
 * answered, and `dispatch-stats-warning` why they cover this replica only while Redis is away.
 */
export function toolStatsHandler(options: ToolStatsHandlerOptions) {
  const reader = options.shared ?? localStatsReader(options.stats);
  const windowSeconds = options.stats.window.seconds;
  const statsOf = (tenant: string, tool: string, counts: TenantCounts): ToolStatsMessage => {
    const counters = counts.tools.get(tool);
    const recent = counts.recent.get(tool);
    const rates = ratesOf(recent);
    const health = options.health();
    // The caller's breaker: its own tool's, or its own of a shared tool (callBreakerKey).
    const key = callBreakerKey(tenant, { tenant: options.registry()?.lookup(tenant, tool)?.tenant ?? '', name: tool });
    return create(ToolStatsSchema, {
      tool,
      calls: BigInt(counters?.calls ?? 0),
      rates: create(ToolRatesSchema, rates),
      windowCalls: BigInt(recent?.calls ?? 0),
      windowSeconds,
      allTimeRates: create(ToolRatesSchema, ratesOf(counters)),
      breakerState: health.state(key),
      healthScore: health.healthScore(key),
      alerts: alertsOf(rates),
      alertThresholds: THRESHOLDS,
    });
  };
  return unary(options.logger, async (request: GetToolStatsRequest, call: grpc.ServerUnaryCall<GetToolStatsRequest, GetToolStatsResponse>) => {
    const { tenant } = options.authenticate()(call, 'dispatch');
    const registry = options.registry();
    if (request.tool === '') pageAfter(request.pageToken);
    // No tool has a longer name (validate-spec.ts), so none is registered or counted: answered
    // without a read, whose HMGET carries the name in each of its 8 fields (a 3 MB name sent
    // 27 MB to Redis, on the connection every tenant's shared counts use).
    if (request.tool.length > MAX_TOOL_NAME_CHARS) throw notFound(request.tool);
    const counts = await reader.read(tenant, request.tool);
    const headers = new grpc.Metadata();
    headers.set(STATS_SCOPE_HEADER, counts.scope);
    if (counts.warning !== undefined) headers.set(STATS_WARNING_HEADER, counts.warning);
    call.sendMetadata(headers);
    if (request.tool !== '') {
      const counters = counts.tools.get(request.tool);
      if (!registry?.lookup(tenant, request.tool) && !counters) throw notFound(request.tool);
      return create(GetToolStatsResponseSchema, { stats: [statsOf(tenant, request.tool, counts)] });
    }
    const names = registry ? registry.list(tenant).map((t) => t.name) : [...counts.tools.keys()];
    const page = namePage(names, {
      pageSize: request.pageSize,
      pageToken: request.pageToken,
      maxBytes: options.maxResponseBytes ?? 4 * 1024 * 1024,
      entry: (tool) => {
        const stats = statsOf(tenant, tool, counts);
        return { value: stats, bytes: toBinary(ToolStatsSchema, stats).length };
      },
    });
    return create(GetToolStatsResponseSchema, { stats: page.values, nextPageToken: page.nextPageToken });
  });
}
