import type { SessionScope } from '../store';
import type { PipelineDeps } from './pipeline-deps';

/**
 * Gives back what an attempt took in beginAttempt when its tool will not run (a refusal after that
 * step: its breaker, its record, a loop stop; a cancellation): its idempotency claim (`claimKey`,
 * taken as `owner`) and, when it took it (`probe`), its op's loop-block probe (held as `owner`,
 * LoopBlock.holder), so that the next call runs once more rather than wait out the probe's lease
 * (the tool's timeout and more). One store step for both (FinishAttempt), none when it took neither;
 * on failure their leases run out by themselves. Only `owner`'s are freed: a late one frees no other's.
 */
export async function giveBack(deps: PipelineDeps, scope: SessionScope, op: string, owner: string, claimKey: string | undefined, probe: boolean | undefined): Promise<void> {
  if (claimKey === undefined && !probe) return;
  try {
    await deps.store.finishAttempt({ scope, op, idempotency: claimKey === undefined ? undefined : { key: claimKey, action: 'release', owner }, unusedProbe: probe ? owner : undefined });
  } catch {
    // The claim's and the probe's leases run out by themselves.
  }
}
