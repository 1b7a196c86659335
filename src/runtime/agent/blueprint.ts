// The runtime's view of an agent tree (read by src/core/agents/tree.ts; never parsed again here).
import { sandboxSpecOf } from '../../core/agents/backend.js';
import type { AgentTree } from '../../core/agents/service.js';
import type { ToolSpec } from '../../core/agents/tree.js';
import type { ToolRef } from '../tools/mcp.js';
import type { AgentBlueprint } from './build.js';

function toRef(spec: ToolSpec): ToolRef {
  return { name: spec.name, mcpServerUrl: spec.mcp_server_url, mcpServerName: spec.mcp_server_name };
}

/** The blueprint of `tree` in `workspaceId`. */
export function blueprintOf(workspaceId: string, tree: AgentTree): AgentBlueprint {
  const d = tree.definition;
  return {
    workspaceId,
    agentId: tree.agentId,
    agentName: d.name,
    revision: tree.revision,
    instructions: d.instructions,
    modelId: d.runtime.model.model_id,
    runTimeoutMs: d.runtime.run_timeout_seconds !== undefined ? d.runtime.run_timeout_seconds * 1000 : undefined,
    userTimezone: d.runtime.user_timezone,
    tools: d.tools.tools.map(toRef),
    interruptConfig: d.tools.interrupt_config ?? {},
    subagents: d.subagents.map((s) => ({
      name: s.name,
      description: s.description,
      instructions: s.instructions,
      modelId: s.model_id,
      tools: s.tools?.tools.map(toRef),
      interruptConfig: s.tools?.interrupt_config,
    })),
    files: tree.files,
    sandbox: sandboxSpecOf(d.backend),
  };
}
