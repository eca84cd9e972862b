import type { Logger } from '../log';
import type { PostHookInput } from '../pipeline';
import { rulesByTool } from './glob';
import type { AfterRule } from './policy-types';

/** A post-tool hook: sees the output and returns annotations for the result's warnings. */
export type PostHook = (input: PostHookInput) => readonly string[] | Promise<readonly string[]>;

/**
 * Step 9's post-tool hooks: the configured `after:` rules, then the hooks given in code. A hook
 * that throws is logged and adds nothing; it never fails the call.
 */
export function createPostHook(after: readonly AfterRule[], hooks: readonly PostHook[], logger: Logger): PostHook {
  const rulesFor = rulesByTool(after);
  const fromRules = (input: PostHookInput): string[] => {
    const notes: string[] = [];
    for (const rule of rulesFor(input.tool.name)) {
      if (rule.on === 'error' ? !input.isError : rule.on === 'success' ? input.isError : false) continue;
      if (rule.contains !== undefined && !input.output.includes(rule.contains)) continue;
      notes.push(rule.warn);
    }
    return notes;
  };
  // Without hooks in code, the rules answer synchronously: no promise per call.
  if (hooks.length === 0) return fromRules;
  return async (input) => {
    const notes = fromRules(input);
    for (const hook of hooks) {
      try {
        notes.push(...(await hook(input)));
      } catch (error) {
        logger.warn('post-tool hook failed', { tool: input.tool.name, error: (error as Error).message });
      }
    }
    return notes;
  };
}
