import { chargeChecksTo, type ResolvedTool } from '../registry';
import type { Correction } from './guards';
import type { PipelineDeps, TurnContext } from './pipeline-deps';

/** The tool and arguments the next attempt of a call runs with, once a correction is applied. */
export interface Corrected {
  readonly tool: ResolvedTool;
  readonly args: unknown;
}

/** A correction not applied: the call ends with its last error, and `warning` (when set) says why. */
export interface NotCorrected {
  readonly refused: true;
  readonly warning?: string;
}

/**
 * Applies a reflector's correction to the next attempt of a call, or refuses it. A fallback tool
 * is refused when it is unknown, was not offered in this turn (the model may call only what it
 * was offered, and a fallback is no way around that), was already tried by this call (a cycle of
 * fallbacks would only repeat failures until recovery gives up and ends the whole turn), does
 * not accept the arguments, or is side-effecting while the tool it would replace is read-only (a
 * call the model made to a tool that changes nothing must not change anything; the config file
 * is only warned of such a pair at start-up, and a tenant may register either tool later, so this
 * is the check that holds); fixed arguments are refused when the tool's schema does not accept
 * them. Adds to `warnings` what the model should know of a correction applied.
 */
export function applyCorrection(deps: PipelineDeps, turn: TurnContext, current: Corrected, correction: Correction, attempt: number, tried: ReadonlySet<string>, warnings: string[]): Corrected | NotCorrected {
  let { tool, args } = current;
  const notes: string[] = [];
  chargeChecksTo(turn.tenant);
  if (correction.tool !== undefined && correction.tool !== tool.name) {
    if (tried.has(correction.tool)) return { refused: true };
    if (turn.offeredTools && !turn.offeredTools.has(correction.tool)) {
      // The fallback is not named: the model was not offered it, so it may not call it either.
      return { refused: true, warning: `no fallback ran: the fallback_tool of "${tool.name}" was not offered to you in this turn` };
    }
    const fallback = deps.registry.lookup(turn.tenant, correction.tool);
    if (!fallback || (correction.arguments === undefined && !fallback.validate(args))) return { refused: true };
    if (tool.readOnly && !fallback.readOnly) {
      return { refused: true, warning: `no fallback ran: "${tool.name}" is read-only and its fallback_tool "${fallback.name}" is side-effecting; a read-only call never falls back to a tool that changes things` };
    }
    notes.push(`fell back from "${tool.name}" to "${fallback.name}"${correction.note ? `: ${correction.note}` : ''}`);
    tool = fallback;
  }
  if (correction.arguments !== undefined) {
    if (!tool.validate(correction.arguments)) return { refused: true };
    args = correction.arguments;
    notes.push(`arguments corrected after attempt ${attempt}${correction.note ? `: ${correction.note}` : ''}`);
  }
  warnings.push(...notes);
  return { tool, args };
}
