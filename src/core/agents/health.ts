// The hosted SDK's agent health check: every tool server the agent names (its tools.json and each
// subagent's) probed at once with the credentials a run of the caller would send.
import { type Caller, canInvoke } from '../caller.js';
import { HangarError } from '../errors.js';
import type { ProbeErrorCode } from '../mcp-servers/health.js';
import type { McpServerService } from '../mcp-servers/service.js';
import { normalizeServerUrl } from '../mcp-servers/url.js';
import type { OAuthService } from '../oauth/service.js';
import type { AgentService } from './service.js';

/** How long one server's probe may take; they run in parallel, so this bounds the whole check. */
export const PROBE_TIMEOUT_MS = 10_000;

/** One tool server's health. */
export interface ServerHealth {
  url: string;
  /** The registration's id and name; null when no server is registered at the URL. */
  mcpServerId: string | null;
  name: string | null;
  ok: boolean;
  errorCode: ProbeErrorCode | null;
  error: string | null;
}

/** An agent's health: `ok` only when every server is (an agent without tool servers is healthy). */
export interface AgentHealth {
  agentId: string;
  ok: boolean;
  servers: ServerHealth[];
}

/** Check an agent's tool servers. */
export class AgentHealthService {
  constructor(
    private readonly deps: { agents: AgentService; mcpServers: McpServerService; oauth: OAuthService },
    private readonly timeoutMs = PROBE_TIMEOUT_MS,
  ) {}

  async check(caller: Caller, agentId: string): Promise<AgentHealth> {
    // The probe sends the workspace's stored credentials, as a tool listing does.
    if (!canInvoke(caller.role)) throw new HangarError('forbidden', `a ${caller.role} key cannot use a tool server’s credentials`);
    const agent = await this.deps.agents.get(caller, agentId);
    const refs = [...agent.definition.tools.tools, ...agent.definition.subagents.flatMap((s) => s.tools?.tools ?? [])];
    const urls = [...new Set(refs.map((r) => normalizeServerUrl(r.mcp_server_url)))].sort();
    const servers = await Promise.all(urls.map((url) => this.server(caller, url, agent.id)));
    return { agentId: agent.id, ok: servers.every((s) => s.ok), servers };
  }

  private async server(caller: Caller, url: string, agentId: string): Promise<ServerHealth> {
    const server = await this.deps.mcpServers.findByUrl(caller.workspaceId, url);
    if (!server) {
      // A run would not call it either: the agent's tools from it are unavailable.
      return { url, mcpServerId: null, name: null, ok: false, errorCode: 'unreachable', error: `no tool server is registered at ${url} in this workspace` };
    }
    const known = { url, mcpServerId: server.id, name: server.name };
    let headers: Record<string, string> | undefined;
    try {
      headers = await this.deps.oauth.toolServerHeadersIfAuthorized({ workspaceId: caller.workspaceId, principal: caller.principal, agentId, server });
    } catch (error) {
      // Its provider gone, or a refresh the provider refused: as a run would, it cannot authorize.
      if (!(error instanceof HangarError)) throw error;
      return { ...known, ok: false, errorCode: 'auth_failed', error: `this OAuth-backed server cannot be authorized: ${error.message}` };
    }
    if (!headers) {
      return { ...known, ok: false, errorCode: 'auth_failed', error: `your principal has not authorized this OAuth-backed server (hangar mcp-servers connect ${server.id})` };
    }
    const result = await this.deps.mcpServers.probe(server.url, headers, this.timeoutMs);
    return result.ok ? { ...known, ok: true, errorCode: null, error: null } : { ...known, ok: false, errorCode: result.errorCode, error: result.error };
  }
}
