// Operation ids of the OpenAPI document. The hosted API reference's operations keep its ids, so that
// clients generated from either document call the same names; every other operation gets one from
// its summary (`Create a thread` → `createThread`), made unique.

/** The reference's operation ids, by `<method> <path>` as Hangar serves the path. */
const REFERENCE_IDS: Record<string, string> = {
  'get /v1/deepagents/agents': 'listManagedDeepAgents',
  'post /v1/deepagents/agents': 'createManagedDeepAgent',
  'get /v1/deepagents/agents/{agent_id}': 'getManagedDeepAgent',
  'patch /v1/deepagents/agents/{agent_id}': 'updateManagedDeepAgent',
  'delete /v1/deepagents/agents/{agent_id}': 'deleteManagedDeepAgent',
  'get /v1/deepagents/agents/{agent_id}/health': 'getManagedDeepAgentHealth',
  'post /v1/deepagents/threads': 'createManagedDeepAgentThread',
  'get /v1/deepagents/threads': 'listManagedDeepAgentThreads',
  'post /v1/deepagents/threads/search': 'searchManagedDeepAgentThreads',
  'post /v1/deepagents/threads/count': 'countManagedDeepAgentThreads',
  'get /v1/deepagents/threads/{thread_id}': 'getManagedDeepAgentThread',
  'post /v1/deepagents/threads/{thread_id}/runs': 'createManagedDeepAgentThreadRun',
  'post /v1/deepagents/threads/{thread_id}/runs/stream': 'streamManagedDeepAgentThreadRun',
  'post /v1/deepagents/threads/{thread_id}/resolve-interrupt': 'resolveManagedDeepAgentThreadInterrupt',
  'post /v1/deepagents/mcp-servers': 'createMcpServer',
  'get /v1/deepagents/mcp-servers': 'listMcpServers',
  'get /v1/deepagents/mcp-servers/{mcp_server_id}': 'getMcpServer',
  'patch /v1/deepagents/mcp-servers/{mcp_server_id}': 'updateMcpServer',
  'delete /v1/deepagents/mcp-servers/{mcp_server_id}': 'deleteMcpServer',
  'post /v1/deepagents/mcp-servers/{mcp_server_id}/oauth-provider': 'registerMcpOAuthProvider',
  'post /v1/deepagents/auth-sessions': 'startAuthSession',
  'get /v1/deepagents/auth-sessions/{session_id}': 'getAuthSession',
};

type Operation = { operationId?: string; summary?: string; security?: unknown[] };

/** Give every operation of `paths` its id (in place): the reference's, its own, or one from its summary. */
export function assignOperationIds(paths: Record<string, Record<string, Operation>>): void {
  const taken = new Set<string>();
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(item)) {
      const reference = REFERENCE_IDS[`${method} ${path}`];
      if (reference) op.operationId = reference;
      if (op.operationId) taken.add(op.operationId);
    }
  }
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (op.operationId) continue;
      const reference = REFERENCE_IDS[`${method} ${path}`];
      let id = reference ?? fromSummary(op.summary ?? `${method} ${path}`);
      if (!reference) for (let n = 2; taken.has(id); n++) id = `${fromSummary(op.summary ?? '')}${n}`;
      op.operationId = id;
      taken.add(id);
    }
  }
}

/** `Get the state of a thread` → `getTheStateOfAThread`, without the filler words. */
function fromSummary(summary: string): string {
  const words = summary
    .replace(/\(.*?\)/g, ' ')
    .split(/[^A-Za-z0-9]+/)
    .filter((w) => w !== '' && !['a', 'an', 'the', 'of', 'to', 'for', 'and', 'its', 'or', 'by', 'with', 'as', 'in', 'on', 'from'].includes(w.toLowerCase()));
  return words.map((w, i) => (i === 0 ? w.toLowerCase() : w[0]!.toUpperCase() + w.slice(1))).join('');
}
