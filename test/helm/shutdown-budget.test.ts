// A stopping pod's budget: terminationGracePeriodSeconds must cover the preStop sleep, the drain
// (which must cover the default tool timeout, or every rollout cancels longer calls, and
// side-effecting ones end OUTCOME_UNKNOWN), then dispatchd's closing (CLOSE_BUDGET_MS, which holds
// the trace flush after the first round of plugins, the store's close alongside) and its exit. The
// numbers come from the server's own constants.
import { join } from 'node:path';
import { CLOSE_BUDGET_MS, FIRST_CLOSE_MS } from '../../src/app';
import { DEFAULT_LIMITS, TOOL_DEFAULTS } from '../../src/options';
import { SHUTDOWN_FLUSH_MS } from '../../src/telemetry/span-batcher';
import { containerOf, deploymentOf, envOf, render, renderObjects, useRenderer, valuesFile, type Obj } from './render-chart';

useRenderer({ reuseBuild: true });

/** The store's close: its pending records, then QUIT, each bounded by the store timeout. */
const STORE_CLOSE_MS = 2 * DEFAULT_LIMITS.storeTimeoutMs;
/** The close's bound, and a little for the process's exit: the chart's seconds for the closing. */
const CLOSING_S = Math.ceil((CLOSE_BUDGET_MS + 250) / 1000);

it("the close's budget holds its slowest round: the plugins that end calls, then the trace flush or the store", () => {
  expect(CLOSE_BUDGET_MS).toBeGreaterThanOrEqual(FIRST_CLOSE_MS + Math.max(SHUTDOWN_FLUSH_MS, STORE_CLOSE_MS));
  expect(CLOSING_S).toBe(7);
});

function budgetOf(objects: Obj[]) {
  const preStop = Number(containerOf(objects).lifecycle.preStop.exec.command[1]);
  const graceS = Number(envOf(objects).DISPATCH_GRACE_MS) / 1000;
  const total = deploymentOf(objects).spec.template.spec.terminationGracePeriodSeconds as number;
  return { preStop, graceS, total, afterDrain: total - preStop - graceS };
}

it('by default, the drain covers the default tool timeout and the pod outlives preStop + drain + closing', () => {
  const b = budgetOf(renderObjects([]));
  expect(b.graceS * 1000).toBeGreaterThanOrEqual(TOOL_DEFAULTS.timeoutMs);
  expect(b.afterDrain).toBeGreaterThanOrEqual(CLOSING_S);
  expect(b).toEqual({ preStop: 5, graceS: 30, total: 45, afterDrain: 10 });
});

it.each([
  ['sentinel', join(__dirname, 'values-sentinel-tls.yaml')],
  ['cluster (terminationGracePeriodSeconds 60)', join(__dirname, 'values-cluster-nohpa.yaml')],
])('the %s value set leaves the closing its time', (_label, file) => {
  const b = budgetOf(renderObjects([file]));
  expect(b.afterDrain).toBeGreaterThanOrEqual(CLOSING_S);
});

describe('the chart refuses a budget without the closing, at its exact bound', () => {
  const values = (shutdown: string) => [valuesFile(`shutdown: {preStopSleepSeconds: 5, graceMs: 30000, ${shutdown}}`)];

  it('terminationGracePeriodSeconds: preStop + grace + the closing is the least accepted', () => {
    expect(budgetOf(renderObjects(values(`terminationGracePeriodSeconds: ${35 + CLOSING_S}`))).total).toBe(35 + CLOSING_S);
    const r = render(values(`terminationGracePeriodSeconds: ${35 + CLOSING_S - 1}`));
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(
      `shutdown.terminationGracePeriodSeconds (${34 + CLOSING_S}) must be at least preStopSleepSeconds + graceMs/1000 + ${CLOSING_S} s to close (trace flush, Redis) (${35 + CLOSING_S})`,
    );
  });

  it('marginSeconds: the closing is the least accepted', () => {
    expect(budgetOf(renderObjects(values(`marginSeconds: ${CLOSING_S}`))).afterDrain).toBe(CLOSING_S);
    const r = render(values(`marginSeconds: ${CLOSING_S - 1}`));
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(`shutdown.marginSeconds (${CLOSING_S - 1}) must be at least ${CLOSING_S}: the trace flush and closing Redis after the drain`);
  });
});
