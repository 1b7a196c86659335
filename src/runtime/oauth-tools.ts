// OAuth-backed tool servers inside an agent run: every call to an `auth_type: "oauth"` tool server
// carries the run principal's bearer token (the one scoped to the run's agent when there is one,
// else the default; refreshed when needed), and a principal who has not
// authorized yet pauses the run with an interrupt carrying the authorization URL; the run resumes
// (a `Command({ resume })`) once the browser flow has completed.
import type { RunnableConfig } from '@langchain/core/runnables';
import { DynamicStructuredTool, type StructuredToolInterface, tool as makeTool } from '@langchain/core/tools';
import { interrupt } from '@langchain/langgraph';
import { MultiServerMCPClient } from '@langchain/mcp-adapters';
import { z } from 'zod';
import { OAuthAuthorizationRequired, oauthInterruptValue } from '../core/oauth/authorization-required.js';
import { isOAuthBacked, type OAuthService, type OAuthToolServer } from '../core/oauth/service.js';
import { redactServerUrl } from '../core/mcp-servers/url.js';

/**
 * The `configurable` key that carries the run's principal (the API key's principal). The run worker
 * sets it; OAuth-backed tool calls act for this principal.
 */
export const PRINCIPAL_CONFIG_KEY = 'principal';

/**
 * The `configurable` key that carries the run's agent id (as the LangGraph server names it): OAuth-backed
 * tool calls use the principal's token scoped to this agent when there is one, else the default.
 */
export const AGENT_CONFIG_KEY = 'assistant_id';

/** The agent of a run, from its config. */
export function agentOf(config: RunnableConfig | undefined): string | undefined {
  const value = (config?.configurable as Record<string, unknown> | undefined)?.[AGENT_CONFIG_KEY];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The principal of a run, from its config. */
export function principalOf(config: RunnableConfig | undefined): string | undefined {
  const value = (config?.configurable as Record<string, unknown> | undefined)?.[PRINCIPAL_CONFIG_KEY];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Who the tool calls act for. */
export interface OAuthToolContext {
  oauth: OAuthService;
  workspaceId: string;
  principal: string;
  /** The run's agent: its own token for the provider is used before the principal's default. */
  agentId?: string | undefined;
}

/**
 * Inside a LangGraph node: the headers for `server` (stored ones plus the principal's bearer token).
 * Without an authorization the run pauses with an OAuthInterruptValue; after the resume the headers
 * are made again, and a still-missing authorization is thrown.
 */
export async function requireToolServerHeaders(context: OAuthToolContext, server: OAuthToolServer, toolName: string): Promise<Record<string, string>> {
  const headers = () => context.oauth.toolServerHeaders({ workspaceId: context.workspaceId, principal: context.principal, agentId: context.agentId, server });
  try {
    return await headers();
  } catch (error) {
    if (!(error instanceof OAuthAuthorizationRequired)) throw error;
    interrupt(oauthInterruptValue(error, toolName));
    return headers();
  }
}

/**
 * A `beforeToolCall` hook for `@langchain/mcp-adapters`' MultiServerMCPClient: for each call, the
 * fresh headers of the server named `serverName` (`servers` maps the client's server names).
 */
export function oauthBeforeToolCall(context: OAuthToolContext, servers: ReadonlyMap<string, OAuthToolServer>) {
  return async ({ serverName }: { serverName: string }) => {
    const server = servers.get(serverName);
    if (!server || !isOAuthBacked(server)) return {};
    return { headers: await context.oauth.toolServerHeaders({ workspaceId: context.workspaceId, principal: context.principal, agentId: context.agentId, server }) };
  };
}

/**
 * Wrap a tool of an OAuth-backed server so that, before it runs, the principal's authorization is
 * checked: without one the run pauses (LangGraph `interrupt`); the call itself gets fresh headers
 * from oauthBeforeToolCall.
 */
export function withOAuthAuthorization(tool: StructuredToolInterface, context: OAuthToolContext, server: OAuthToolServer): StructuredToolInterface {
  if (!isOAuthBacked(server)) return tool;
  return new DynamicStructuredTool({
    name: tool.name,
    description: tool.description,
    schema: tool.schema as DynamicStructuredTool['schema'],
    // Invoked with plain arguments, the wrapped tool already returns content only.
    responseFormat: 'content',
    func: async (args, _runManager, config) => {
      await requireToolServerHeaders(context, server, tool.name);
      return tool.invoke(args, config);
    },
  });
}

/** A tool server as the runtime's tool loader sees it. */
export interface RuntimeToolServer extends OAuthToolServer {
  url: string;
}

/**
 * What the runtime's MCP tool loader uses for OAuth-backed servers of one workspace. The agent is
 * built once per revision, before any principal is known; calls read the principal from the run's
 * config (PRINCIPAL_CONFIG_KEY).
 */
export interface OAuthToolAccess {
  /** Headers to list the server's tools with, or undefined when nobody in the workspace has authorized yet. */
  listingHeaders(server: RuntimeToolServer): Promise<Record<string, string> | undefined>;
  /** The `beforeToolCall` hook of the server's MCP client: fresh headers of the run's principal. */
  beforeToolCall(server: RuntimeToolServer): (request: { serverName: string }, state: unknown, config: RunnableConfig) => Promise<{ headers: Record<string, string> }>;
  /** Wrap a listed tool: pause the run until the run's principal has authorized. */
  guard(tool: StructuredToolInterface, server: RuntimeToolServer): StructuredToolInterface;
  /** A tool for a server whose tools could not be listed yet: authorizes, then lists and calls per call. */
  deferred(ref: { name: string }, server: RuntimeToolServer): StructuredToolInterface;
}

/** OAuthToolAccess over the OAuth service, for the workspace `workspaceId`. */
export function oauthToolAccess(oauth: OAuthService, workspaceId: string): OAuthToolAccess {
  const contextOf = (config: RunnableConfig | undefined): OAuthToolContext => {
    const principal = principalOf(config);
    if (!principal) throw new Error(`this tool server is OAuth-backed and the run carries no principal (configurable.${PRINCIPAL_CONFIG_KEY})`);
    return { oauth, workspaceId, principal, agentId: agentOf(config) };
  };
  return {
    async listingHeaders(server) {
      const token = await oauth.listingBearer(workspaceId, server);
      if (token === undefined) return undefined;
      const headers = Object.fromEntries(server.headers.filter((h) => h.key.toLowerCase() !== 'authorization').map((h) => [h.key, h.value]));
      return { ...headers, Authorization: `Bearer ${token}` };
    },
    beforeToolCall(server) {
      return async (_request, _state, config) => {
        const context = contextOf(config);
        return { headers: await oauth.toolServerHeaders({ workspaceId, principal: context.principal, agentId: context.agentId, server }) };
      };
    },
    guard(tool, server) {
      return new DynamicStructuredTool({
        name: tool.name,
        description: tool.description,
        schema: tool.schema as DynamicStructuredTool['schema'],
        responseFormat: 'content',
        func: async (args, _runManager, config) => {
          await requireToolServerHeaders(contextOf(config), server, tool.name);
          return tool.invoke(args, config);
        },
      });
    },
    deferred(ref, server) {
      return makeTool(
        async (args: Record<string, unknown>, config) => {
          const headers = await requireToolServerHeaders(contextOf(config), server, ref.name);
          const client = new MultiServerMCPClient({
            mcpServers: { server: { transport: 'http', url: server.url, headers, automaticSSEFallback: true, reconnect: { enabled: false } } },
            throwOnLoadError: true,
            onConnectionError: 'throw',
            // As the runtime's own clients: embedded resources in the result the model reads.
            outputHandling: 'content',
          });
          try {
            const found = (await client.getTools()).find((t) => t.name === ref.name);
            if (!found) throw new Error(`tool server ${redactServerUrl(server.url)} does not offer a tool named "${ref.name}"`);
            return (await found.invoke(args, config)) as unknown;
          } finally {
            await client.close().catch(() => {});
          }
        },
        {
          name: ref.name,
          description: `Tool "${ref.name}" of ${redactServerUrl(server.url)}. Its description is shown once a user has authorized the server; call it with the arguments it needs.`,
          schema: z.object({}).passthrough(),
        },
      );
    },
  };
}

