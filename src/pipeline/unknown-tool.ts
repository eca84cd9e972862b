import type { DispatchError } from '../errors';
import { errors } from '../errors';
import { terminalText } from '../events/terminal-text';
import type { UnlistedSource } from '../executors';
import { closestMatch } from '../json';
import { shortened } from './bound-result';
import type { PipelineDeps, TurnContext } from './pipeline-deps';

/**
 * A name as quoted back in a message (and as a result's resolved_tool_name): a made-up one may be
 * megabytes, so cut at 200 characters, then its control and invisible or bidirectional format
 * characters written `\u001b` (terminal-text), so the model and a terminal see what it held.
 */
export const quoted = (name: string): string => terminalText(shortened(name, 200));

/** The most offered tools a suggestion lists, and the most characters it lists them in. */
const MAX_LISTED_TOOLS = 20;
const MAX_LISTED_CHARS = 2_000;
/** The most tool sources not yet listed that a message names. */
const MAX_LISTED_SOURCES = 3;

/**
 * The first offered tools, in at most {@link MAX_LISTED_CHARS} (each name is at most a tool
 * name's 128 characters: the request check refuses longer ones), without copying the whole set:
 * 128 calls each listing 20 names of 150,000 characters took 1.1 GB and blocked the event loop.
 */
function offeredList(offered: ReadonlySet<string>): string {
  const names: string[] = [];
  for (const name of offered) {
    if (names.length === MAX_LISTED_TOOLS) break;
    names.push(name);
  }
  return listed(names, offered.size);
}

/**
 * The first {@link MAX_LISTED_TOOLS} of `total` names, saying how many more there are: a list cut
 * at 20 read as all there was, and the tool the model wanted might be past it.
 */
function listed(names: readonly string[], total = names.length): string {
  const shown = shortened(names.slice(0, MAX_LISTED_TOOLS).join(', '), MAX_LISTED_CHARS);
  return total > MAX_LISTED_TOOLS ? `${shown} (and ${total - MAX_LISTED_TOOLS} more)` : shown;
}

/** The executors' tool sources whose tools are not known yet (an MCP server not connected since the start). */
function unlistedSources(deps: PipelineDeps): UnlistedSource[] {
  const sources: UnlistedSource[] = [];
  for (const executor of deps.executors.values()) if (executor.unlisted) sources.push(...executor.unlisted());
  return sources;
}

/**
 * Why a call of `sent` found no tool, and what to call instead. A tool source not listed yet is
 * named: before, a tool of an MCP server down since the start read as a name the model made up.
 */
export function unknownTool(deps: PipelineDeps, turn: TurnContext, sent: string): DispatchError {
  const name = quoted(sent);
  if (turn.offeredTools && !turn.offeredTools.has(sent)) {
    // A near miss of an offered name ("ehco") is named, as one of a registered tool's is below.
    const guess = closestMatch(sent, turn.offeredTools);
    return errors.unknownTool(
      `tool "${name}" is not available; it was not offered to you${guess === undefined ? '' : `; did you mean "${quoted(guess)}"?`}`,
      `${guess === undefined ? '' : `Call "${quoted(guess)}" instead, if it is what you meant. `}Call one of the offered tools: ${offeredList(turn.offeredTools)}.`,
    );
  }
  // Offered but not registered: the guess and the list are of the tools the model was offered, as a call of any other is refused.
  const names = deps.registry.list(turn.tenant).flatMap((t) => (turn.offeredTools && !turn.offeredTools.has(t.name) ? [] : [t.name]));
  // None at all: said so, where "Available tools: ." read as a list cut short.
  const available = names.length === 0 ? 'No tool is available: answer without calling tools.' : `Available tools: ${listed(names)}.`;
  const unlisted = unlistedSources(deps);
  const source = unlisted.find((s) => s.prefix !== '' && sent.startsWith(s.prefix));
  if (source) {
    return errors.unknownTool(
      `tool "${name}" not found: it would be one of ${source.source}'s tools (named ${source.prefix}*), which has not connected yet, so its tools are not known`,
      `Try it again later, or do without it. ${available}`,
    );
  }
  const guess = closestMatch(sent, names);
  const more = unlisted.length > MAX_LISTED_SOURCES ? ` (and ${unlisted.length - MAX_LISTED_SOURCES} more)` : '';
  const one = unlisted.length === 1;
  const pending = unlisted.length === 0 ? '' : `; ${unlisted.slice(0, MAX_LISTED_SOURCES).map((s) => s.source).join(', ')}${more} ${one ? 'has' : 'have'} not connected yet, and ${one ? 'its' : 'their'} tools are not known`;
  return errors.unknownTool(`tool "${name}" not found${guess ? `; did you mean "${guess}"?` : ''}${pending}`, guess ? `Call "${guess}" instead, if it is what you meant. ${available}` : available);
}
