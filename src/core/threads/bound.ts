// The metadata LangGraph servers write into a thread when a run is created on it: `assistant_id` and
// `graph_id` (both the agent id here: every agent is its own graph and its own assistant). Agent
// chat UIs list a user's history with `threads.search({metadata: {assistant_id}})`.

/** The metadata keys naming the agent a thread is bound to. */
export function agentMetadata(agentId: string): { assistant_id: string; graph_id: string } {
  return { assistant_id: agentId, graph_id: agentId };
}
