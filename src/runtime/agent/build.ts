// Building a deep agent (deepagents' createDeepAgent on LangGraph) from an agent's definition tree.
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type { StructuredToolInterface } from '@langchain/core/tools';
import type { BaseCheckpointSaver, BaseStore } from '@langchain/langgraph';
import { createDeepAgent, type BackendProtocolV2, type SubAgent } from 'deepagents';
import type { SandboxSpec } from '../../core/agents/backend.js';
import { createMiddleware } from 'langchain';
import type { OAuthToolAccess } from '../oauth-tools.js';
import { loadMcpTools, type DroppedTool, type ToolLimits, type ToolRef, type ToolServerCredentials } from '../tools/mcp.js';
import { respondMiddleware } from './respond.js';
import { toolErrorsMiddleware } from './tool-errors.js';
import { interruptOnFor } from './approvals.js';
import { reviewMiddleware } from './review.js';
import { agentFileSystem, DEFINITION_ROOT, definitionBackend } from './backend.js';
import { localDateTimeLine } from './clock.js';
import { memoryNamespace } from '../../core/store/service.js';

/** What the runtime needs of one subagent of the definition. */
export interface SubagentBlueprint {
  name: string;
  description: string;
  instructions: string;
  /** `<provider>:<model_id>` or a saved configuration name; the parent's model when absent. */
  modelId?: string | undefined;
  /** The subagent's own tools.json entries; none when absent. */
  tools?: ToolRef[] | undefined;
  /** The subagent's own `interrupt_config` (over the parent's rules); the parent's when absent. */
  interruptConfig?: Record<string, boolean> | undefined;
  /** Whether `subagents/<name>/skills/` holds skills. */
  hasSkills?: boolean | undefined;
}

/** What the runtime needs of an agent at one revision. */
export interface AgentBlueprint {
  workspaceId: string;
  agentId: string;
  /** The agent's name at this revision (agent.json `name`): the name of its runs' traces. */
  agentName?: string | undefined;
  revision: string;
  instructions: string;
  modelId: string;
  /** The agent's own run time limit (agent.json `runtime.run_timeout_seconds`); the server's when absent. */
  runTimeoutMs?: number | undefined;
  /** The agent's user's zone (agent.json `runtime.user_timezone`), for runs that send none. */
  userTimezone?: string | undefined;
  tools: ToolRef[];
  /** tools.json `interrupt_config`: which tools wait for a person's approval. */
  interruptConfig?: Record<string, boolean> | undefined;
  subagents: SubagentBlueprint[];
  /** Every file of the tree, relative paths (AGENTS.md, tools.json, skills/…, subagents/…). */
  files: Record<string, string>;
  /** The agent's sandbox (agent.json `backend`); the state backend when absent. */
  sandbox?: SandboxSpec | undefined;
}

/** Services the builder uses. */
export interface BuildDeps {
  resolveModel(modelId: string, workspaceId: string): Promise<BaseChatModel>;
  findServer(workspaceId: string, url: string): Promise<ToolServerCredentials | undefined>;
  checkpointer: BaseCheckpointSaver;
  store: BaseStore;
  toolLimits: ToolLimits;
  /** OAuth-backed tool servers of a workspace (services.oauth through oauthToolAccess); optional. */
  oauthTools?: ((workspaceId: string) => OAuthToolAccess) | undefined;
  /** The sandbox backend of an agent (the sandbox service); without it sandbox agents cannot run. */
  sandboxBackend?:
    | ((owner: { workspaceId: string; agentId: string; spec: SandboxSpec }) => {
        backend: BackendProtocolV2;
        prompt: string;
        /** Runs a tool call with the run's `custom` stream writer, where command output goes. */
        withWriter: <T>(writer: ((chunk: unknown) => void) | undefined, fn: () => T) => T;
      })
    | undefined;
}

/** A tool as shown in `values.tools`. */
export interface ToolInfo {
  name: string;
  description: string;
}

/** A compiled agent, reusable by every run of the same revision. */
export interface BuiltAgent {
  graph: ReturnType<typeof createDeepAgent>;
  /** The tools bound to the main model (filled at the first model call of the first run). */
  tools: ToolInfo[];
  /** Tools named in tools.json that their server does not offer. */
  dropped: DroppedTool[];
  /** A tool server could not be used when it was built, or its tools changed since (LoadedTools.degraded): later runs build it again. */
  readonly degraded: boolean;
  modelName: string;
  /** The agent's name (its id when the blueprint has none): the root run of each trace is named so. */
  agentName: string;
  /** The agent's own run time limit, if it sets one. */
  runTimeoutMs?: number | undefined;
  close(): Promise<void>;
}

/** The namespace of an agent's durable memories in the LangGraph store (the HTTP store API sees it relative to the workspace). */
export { memoryNamespace };

/** Build the deep agent of `blueprint`. */
export async function buildAgent(blueprint: AgentBlueprint, deps: BuildDeps): Promise<BuiltAgent> {
  const refs = [...blueprint.tools, ...blueprint.subagents.flatMap((s) => s.tools ?? [])];
  const loaded = await loadMcpTools({
    refs,
    findServer: (url) => deps.findServer(blueprint.workspaceId, url),
    limits: deps.toolLimits,
    oauth: deps.oauthTools?.(blueprint.workspaceId),
  });
  try {
    const model = await deps.resolveModel(blueprint.modelId, blueprint.workspaceId);
    const toolNamed = (ref: ToolRef): StructuredToolInterface | undefined => loaded.tools.get(ref);
    const mainTools = blueprint.tools.map(toolNamed).filter((t): t is StructuredToolInterface => t !== undefined);
    const named = (refs: ToolRef[]) => refs.flatMap((ref) => (loaded.tools.get(ref) ? [{ ref, name: loaded.tools.get(ref)!.name }] : []));
    const interruptOn = interruptOnFor(named(blueprint.tools), blueprint.interruptConfig ?? {});
    const boundTools: ToolInfo[] = [];
    let captured = false;
    const clock = createMiddleware({
      name: 'LocalClock',
      wrapModelCall: async (request, handler) => {
        if (!captured) {
          // The exact list the model is given (middleware may hide tools the tool node has).
          captured = true;
          boundTools.length = 0;
          for (const t of request.tools) {
            const info = t as { name?: string; description?: string };
            if (info.name) boundTools.push({ name: info.name, description: info.description ?? '' });
          }
        }
        const zone = (request.runtime as { configurable?: Record<string, unknown> } | undefined)?.configurable?.user_timezone ?? blueprint.userTimezone;
        return handler({ ...request, systemMessage: request.systemMessage.concat(`\n\n${localDateTimeLine(zone)}`) });
      },
    });
    const subagents: SubAgent[] = await Promise.all(
      blueprint.subagents.map(async (s) => ({
        name: s.name,
        description: s.description,
        systemPrompt: s.instructions,
        ...(s.modelId ? { model: await deps.resolveModel(s.modelId, blueprint.workspaceId) } : {}),
        tools: (s.tools ?? []).map(toolNamed).filter((t): t is StructuredToolInterface => t !== undefined) as never,
        // Subagents inherit the parent's rules; their own tools.json overrides them key by key.
        // Reviewed like the main agent's calls (review.ts, not deepagents' `interruptOn`); a
        // reviewer's `respond` is a successful tool reply there too; ToolErrors innermost.
        middleware: [respondMiddleware(), reviewMiddleware(interruptOnFor(named(s.tools ?? []), { ...blueprint.interruptConfig, ...(s.interruptConfig ?? {}) })), toolErrorsMiddleware()] as never,
        ...(s.hasSkills ? { skills: [`${DEFINITION_ROOT}subagents/${s.name}/skills/`] } : {}),
      })),
    );
    const definition = await definitionBackend(blueprint.files);
    let sandbox: ReturnType<NonNullable<BuildDeps['sandboxBackend']>> | undefined;
    if (blueprint.sandbox) {
      if (!deps.sandboxBackend) throw new Error('this agent has a sandbox backend, and this server runs no sandbox service');
      sandbox = deps.sandboxBackend({ workspaceId: blueprint.workspaceId, agentId: blueprint.agentId, spec: blueprint.sandbox });
    }
    const hasSkills = Object.keys(blueprint.files).some((p) => p.startsWith('skills/'));
    const graph = createDeepAgent({
      name: blueprint.agentId,
      model: model as never,
      systemPrompt: sandbox ? `${blueprint.instructions}\n\n${sandbox.prompt}` : blueprint.instructions,
      tools: mainTools as never,
      subagents,
      // review.ts in place of deepagents' `interruptOn` (langchain's middleware drops approved calls).
      // ToolErrors last: innermost around each tool call, it sees the tool's own failure.
      middleware: (sandbox
        ? [clock, respondMiddleware(), sandboxOutput(sandbox.withWriter), reviewMiddleware(interruptOn), toolErrorsMiddleware()]
        : [clock, respondMiddleware(), reviewMiddleware(interruptOn), toolErrorsMiddleware()]) as never,
      backend: agentFileSystem({
        definition,
        store: deps.store,
        memoryNamespace: memoryNamespace(blueprint.workspaceId, blueprint.agentId),
        scratch: sandbox?.backend,
      }),
      ...(hasSkills ? { skills: [`${DEFINITION_ROOT}skills/`] } : {}),
      checkpointer: deps.checkpointer,
      store: deps.store,
      permissions: [{ operations: ['write'], paths: [`${DEFINITION_ROOT}**`], mode: 'deny' }],
    });
    boundTools.push(...toolNodeTools(graph, sandbox !== undefined));
    const modelName = (model as { model?: string }).model ?? blueprint.modelId;
    return {
      graph,
      tools: boundTools,
      dropped: loaded.dropped,
      get degraded() {
        return loaded.degraded;
      },
      modelName,
      agentName: blueprint.agentName || blueprint.agentId,
      runTimeoutMs: blueprint.runTimeoutMs,
      close: loaded.close,
    };
  } catch (error) {
    await loaded.close();
    throw error;
  }
}

/** Middleware giving each tool call's sandbox commands the run's `custom` stream writer. */
function sandboxOutput(withWriter: NonNullable<ReturnType<NonNullable<BuildDeps['sandboxBackend']>>>['withWriter']) {
  return createMiddleware({
    name: 'SandboxOutput',
    wrapToolCall: (request, handler) => withWriter((request.runtime as { writer?: (chunk: unknown) => void } | undefined)?.writer, () => handler(request)),
  });
}

/**
 * The tools of the agent's tool node, until the first model call shows the exact bound list:
 * `execute` is left out unless the agent has a sandbox (deepagents binds it only on sandbox backends).
 */
function toolNodeTools(graph: unknown, sandboxed: boolean): ToolInfo[] {
  const node = (graph as { graph?: { nodes?: Record<string, { bound?: { tools?: { name: string; description?: string }[] } }> } }).graph?.nodes?.tools;
  return (node?.bound?.tools ?? []).filter((t) => sandboxed || t.name !== 'execute').map((t) => ({ name: t.name, description: t.description ?? '' }));
}
