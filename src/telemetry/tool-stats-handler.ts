import { create } from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import { GetToolStatsResponseSchema, ToolRatesSchema, ToolStatsSchema, type GetToolStatsRequest, type GetToolStatsResponse, type ToolStats as ToolStatsMessage } from '../../gen/dispatch/v1/registry_pb';
import type { Logger } from '../log';
import { breakerKey } from '../pipeline';
import type { ToolRegistry } from '../registry';
import { RpcError, unary, type Authenticator } from '../server';
import { alertsOf, RATE_THRESHOLDS } from './rate-alerts';
import { ratesOf, type ToolStats } from './tool-stats';
import type { ToolHealthSource } from './tool-health';

/** What GetToolStats needs; the late-bound parts exist once the app is assembled. */
export interface ToolStatsHandlerOptions {
  readonly stats: ToolStats;
  readonly registry: () => ToolRegistry | undefined;
  readonly health: () => ToolHealthSource;
  readonly authenticate: () => Authenticator;
  readonly logger: Logger;
}

const THRESHOLDS = create(ToolRatesSchema, RATE_THRESHOLDS);

/**
 * GetToolStats: per tool of the caller's tenant (its own tools and the shared ones), the calls,
 * the six rates, breaker state, health score, the rates past their alert thresholds and the thresholds. An
 * empty `tool` means every tool; a name that is neither registered nor counted is NOT_FOUND.
 */
export function toolStatsHandler(options: ToolStatsHandlerOptions) {
  const { stats } = options;
  const statsOf = (tenant: string, tool: string): ToolStatsMessage => {
    const counters = stats.get(tenant, tool);
    const rates = ratesOf(counters);
    const health = options.health();
    const owner = options.registry()?.lookup(tenant, tool)?.tenant ?? '';
    const key = breakerKey({ tenant: owner, name: tool });
    return create(ToolStatsSchema, {
      tool,
      calls: BigInt(counters?.calls ?? 0),
      rates: create(ToolRatesSchema, rates),
      breakerState: health.state(key),
      healthScore: health.healthScore(key),
      alerts: alertsOf(rates),
      alertThresholds: THRESHOLDS,
    });
  };
  return unary(options.logger, async (request: GetToolStatsRequest, call: grpc.ServerUnaryCall<GetToolStatsRequest, GetToolStatsResponse>) => {
    const { tenant } = options.authenticate()(call, 'dispatch');
    const registry = options.registry();
    if (request.tool !== '') {
      if (!registry?.lookup(tenant, request.tool) && !stats.get(tenant, request.tool)) {
        throw new RpcError(grpc.status.NOT_FOUND, `tool "${request.tool.slice(0, 200)}" is not registered and has no recorded calls`);
      }
      return create(GetToolStatsResponseSchema, { stats: [statsOf(tenant, request.tool)] });
    }
    const names = new Set([...(registry?.list(tenant).map((t) => t.name) ?? []), ...stats.tools(tenant)]);
    return create(GetToolStatsResponseSchema, { stats: [...names].sort().map((tool) => statsOf(tenant, tool)) });
  });
}
