// OAuth-backed tool servers inside an agent run: every call to an `auth_type: "oauth"` tool server
// carries the run principal's bearer token (refreshed when needed), and a principal who has not
// authorized yet pauses the run with an interrupt carrying the authorization URL; the run resumes
// (a `Command({ resume })`) once the browser flow has completed.
import { DynamicStructuredTool, type StructuredToolInterface } from '@langchain/core/tools';
import { interrupt } from '@langchain/langgraph';
import type { McpServer } from '../core/mcp-servers/service.js';
import { OAuthAuthorizationRequired, oauthInterruptValue } from '../core/oauth/authorization-required.js';
import type { OAuthService } from '../core/oauth/service.js';

/** Who the tool calls act for. */
export interface OAuthToolContext {
  oauth: OAuthService;
  workspaceId: string;
  principal: string;
}

/**
 * A `beforeToolCall` hook for `@langchain/mcp-adapters`' MultiServerMCPClient: for each call, the
 * fresh headers of the server named `serverName` (`servers` maps the client's server names).
 */
export function oauthBeforeToolCall(context: OAuthToolContext, servers: ReadonlyMap<string, McpServer>) {
  return async ({ serverName }: { serverName: string }) => {
    const server = servers.get(serverName);
    if (!server || server.authType !== 'oauth') return {};
    return { headers: await context.oauth.toolServerHeaders({ workspaceId: context.workspaceId, principal: context.principal, server }) };
  };
}

/**
 * Inside a LangGraph node: the headers for `server` (stored ones plus the principal's bearer token).
 * Without an authorization the run pauses with an OAuthInterruptValue; after the resume the headers
 * are made again, and a still-missing authorization is thrown.
 */
export async function requireToolServerHeaders(context: OAuthToolContext, server: McpServer, toolName: string): Promise<Record<string, string>> {
  const headers = () => context.oauth.toolServerHeaders({ workspaceId: context.workspaceId, principal: context.principal, server });
  try {
    return await headers();
  } catch (error) {
    if (!(error instanceof OAuthAuthorizationRequired)) throw error;
    interrupt(oauthInterruptValue(error, toolName));
    return headers();
  }
}

/**
 * Wrap a tool of an OAuth-backed server so that, before it runs, the principal's authorization is
 * checked: without one the run pauses (LangGraph `interrupt`) with an OAuthInterruptValue; after
 * the resume the check runs again, and a still-missing authorization becomes the tool's error.
 */
export function withOAuthAuthorization(tool: StructuredToolInterface, context: OAuthToolContext, server: McpServer): StructuredToolInterface {
  if (server.authType !== 'oauth' || !server.oauthProviderId) return tool;
  return new DynamicStructuredTool({
    name: tool.name,
    description: tool.description,
    schema: tool.schema as DynamicStructuredTool['schema'],
    // Invoked with plain arguments, the wrapped tool already returns content only.
    responseFormat: 'content',
    func: async (args, _runManager, config) => {
      // Pauses the run when the principal has not authorized; the call itself gets fresh headers
      // from oauthBeforeToolCall.
      await requireToolServerHeaders(context, server, tool.name);
      return tool.invoke(args, config);
    },
  });
}
