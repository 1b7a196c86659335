// The names of agents a list names by id (usage rows, schedules), each asked by its id: the agents
// list's first page would miss an agent beyond it.
import { useQueries } from '@tanstack/react-query';
import { ApiError } from './api';
import { agentQuery } from './queries';

/** An agent deleted since is said to be; until a name is there, the id's start. */
export function useAgentNames(ids: string[]): (id: string) => string {
  const unique = [...new Set(ids)];
  const agents = useQueries({ queries: unique.map((id) => agentQuery(id)) });
  const byId = new Map(unique.map((id, i) => [id, agents[i]!]));
  return (id) => {
    const agent = byId.get(id);
    if (agent?.data) return agent.data.name;
    const short = id.slice(0, 8);
    return agent?.error instanceof ApiError && agent.error.status === 404 ? `Deleted agent ${short}` : short;
  };
}
