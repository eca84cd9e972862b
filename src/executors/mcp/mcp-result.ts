/** The parts of an MCP tool result dispatch reads. */
export interface McpToolResult {
  readonly content?: readonly McpContent[];
  readonly structuredContent?: unknown;
  readonly isError?: boolean;
  /** Results from servers speaking the 2024-10-07 protocol. */
  readonly toolResult?: unknown;
}

type McpContent = { readonly type: string } & Record<string, unknown>;

function contentText(item: McpContent): string {
  switch (item.type) {
    case 'text':
      return String(item.text ?? '');
    case 'image':
    case 'audio':
      return `[${item.type}: ${String(item.mimeType ?? 'unknown type')}, ${String(item.data ?? '').length} base64 characters]`;
    case 'resource': {
      const resource = (item.resource ?? {}) as Record<string, unknown>;
      return typeof resource.text === 'string' ? resource.text : `[resource: ${String(resource.uri ?? '')}]`;
    }
    case 'resource_link':
      return `[resource link: ${String(item.uri ?? '')}${item.name ? ` (${String(item.name)})` : ''}]`;
    default:
      return JSON.stringify(item);
  }
}

/**
 * The output text of an MCP result: its content parts, text as is and the others described, one
 * per line; the structured content as JSON when there is no content.
 */
export function resultText(result: McpToolResult): string {
  const content = result.content ?? [];
  if (content.length > 0) return content.map(contentText).join('\n');
  if (result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  if (result.toolResult !== undefined) return typeof result.toolResult === 'string' ? result.toolResult : JSON.stringify(result.toolResult);
  return '';
}
