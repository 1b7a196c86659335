// What a viewer key reads of an agent: its definition and files are stored as given, and a tool server
// URL in them may carry a credential (`?api_key=…`). Keys that may invoke tool servers (admins,
// members) read them as given (SPEC); a viewer reads every string, and every object key, with the
// credentials redacted (`https://host/mcp?api_key=[redacted]&mode=stream`).
import { type Caller, canInvoke } from '../../core/caller.js';
import type { AgentDefinition, ToolsConfig } from '../../core/agents/tree.js';
import { scrubJson } from '../../core/mcp-servers/url.js';
import type { Services } from '../../core/services.js';

/** Every tool server URL a definition names: its tools and interrupt keys, and its subagents'. */
export function namedUrls(d: AgentDefinition): string[] {
  const of = (tools: ToolsConfig | undefined): string[] =>
    tools ? [...tools.tools.map((t) => t.mcp_server_url), ...Object.keys(tools.interrupt_config).filter((k) => k.includes('::')).map((k) => k.split('::')[0]!)] : [];
  return [...of(d.tools), ...d.subagents.flatMap((s) => of(s.tools))];
}

/** A viewer's scrubber for the agent reads of `caller`, or `undefined` for a key that reads them as given. */
export async function viewerScrub(services: Services, caller: Caller, definitions: AgentDefinition[] = []): Promise<((text: string) => string) | undefined> {
  if (canInvoke(caller.role)) return undefined;
  return services.mcpServers.viewerScrubber(caller.workspaceId, definitions.flatMap(namedUrls));
}

/** `value` as `caller` may read it: as given, or redacted for a viewer. */
export async function shownTo<T>(services: Services, caller: Caller, value: T, definitions: AgentDefinition[] = []): Promise<T> {
  const scrub = await viewerScrub(services, caller, definitions);
  return scrub ? scrubJson(value, scrub) : value;
}
