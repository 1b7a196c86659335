// The agent runtime of one process: LangGraph storage, the run event hub, the run queue, the agent
// cache and (unless the process only serves the API) a pool of workers executing runs.
import type { EgressGuard } from '../net/egress.js';
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { ALLOW_NETWORK_POLICY } from '../core/agents/backend.js';
import { BUILT_IN_TOOLS } from '../core/agents/validate.js';
import type { AgentService } from '../core/agents/service.js';
import type { McpServerService } from '../core/mcp-servers/service.js';
import { normalizeServerUrl } from '../core/mcp-servers/url.js';
import type { ModelConfigService } from '../core/model-configs/service.js';
import { isOAuthBacked, type OAuthService } from '../core/oauth/service.js';
import type { RuntimePorts } from '../core/services.js';
import type { Db } from '../db/index.js';
import type { Logger } from '../logging.js';
import type { Metrics } from '../metrics.js';
import { blueprintOf } from './agent/blueprint.js';
import { buildAgent, type BuiltAgent } from './agent/build.js';
import { AgentCache } from './agent/cache.js';
import type { CallbackFactory } from './callbacks.js';
import { RunEventHub } from './events/hub.js';
import type { RunDeadlines } from './models/deadlines.js';
import { NotificationBus } from '../db/bus.js';
import { RunLifecycle } from '../core/runs/lifecycle.js';
import { parseModelId, resolveChatModel, type ModelLimits, type ModelSpec } from './models/resolve.js';
import { RunQueue } from './queue.js';
import { resolvePendingApproval } from './resolve.js';
import { oauthToolAccess } from './oauth-tools.js';
import { checkpointStateReader } from './state.js';
import { checkStateUpdate } from './agent/state-update.js';
import { invalidField } from '../core/errors.js';
import type { BaseMessage } from '@langchain/core/messages';
import { openLangGraphStorage, rollbackRunCheckpoints, type LangGraphStorage } from './storage.js';
import { possibleToolNames, type ToolLimits } from './tools/mcp.js';
import { WorkerPool } from './worker.js';
import { sandboxBackend, SANDBOX_WORKDIR, withToolWriter, type SandboxService } from '../sandbox/index.js';

/** Settings of the runtime (from src/config). */
export interface RuntimeSettings {
  workerConcurrency: number;
  leaseMs: number;
  /** How often idle workers claim without being woken (default 2000): the safety net under notifications. */
  pollMs?: number | undefined;
  /** Attempts of a run whose worker died before it is failed (default 3). */
  maxAttempts?: number | undefined;
  modelLimits: ModelLimits;
  /** Hangar's own deadlines of runs and model calls. */
  deadlines?: RunDeadlines | undefined;
  toolLimits: ToolLimits;
  recursionLimit: number;
  checkpointDurability: 'async' | 'sync' | 'exit';
  /** On stop, how long runs may go on before they are aborted. */
  drainTimeoutMs: number;
  /** Written events each running run keeps in memory for late subscribers (default 256). */
  keepEvents?: number | undefined;
}

/** What the runtime is built from. */
export interface RuntimeDeps {
  db: Db;
  pool: pg.Pool;
  databaseUrl: string;
  agents: AgentService;
  mcpServers: McpServerService;
  modelConfigs: ModelConfigService;
  /** Bearer tokens for OAuth-backed tool servers (issue 7); without it those servers are unavailable. */
  oauth?: OAuthService | undefined;
  logger: Logger;
  settings: RuntimeSettings;
  /** Extra LangChain callbacks for every run (tracing registers here). */
  callbackFactories?: CallbackFactory[];
  /** Sandboxes of agents with a sandbox backend, and the limits the model is told about. */
  sandboxes?: { service: SandboxService; timeoutSeconds: number; maxOutputBytes: number } | undefined;
  /** The process's notification bus (the composition root's); one is opened (and closed) here without it. */
  bus?: NotificationBus | undefined;
  /** Pool for reading run events (the control plane's); `pool` without. */
  controlPool?: pg.Pool | undefined;
  /** The owner of run status (stateless; one is made without it). */
  lifecycle?: RunLifecycle | undefined;
  /**
   * The outbound policy: every run executes inside its scope, so the requests of MCP transports and
   * model SDKs (which take no fetch of ours) are checked at connect time like Hangar's own.
   */
  egress?: EgressGuard | undefined;
  /** Where run durations, queue waits and event-log write lags are recorded (the server's registry). */
  metrics?: Metrics | undefined;
}

/** What an agent's build depends on, remembered per agent so a cache hit needs no tree read. */
interface AgentDependencies {
  revision: string;
  /** Normalised tool server URLs. */
  urls: string[];
  /** Saved model configuration names. */
  models: string[];
}

/** The runtime of this process. */
export class Runtime {
  readonly hub: RunEventHub;
  readonly queue: RunQueue;
  readonly callbackFactories: CallbackFactory[];
  private readonly cache = new AgentCache();
  private readonly dependencies = new Map<string, AgentDependencies>();

  readonly bus: NotificationBus;
  readonly lifecycle: RunLifecycle;

  private constructor(
    readonly deps: RuntimeDeps,
    readonly storage: LangGraphStorage,
    bus: NotificationBus,
    private readonly ownsBus: boolean,
  ) {
    this.bus = bus;
    this.lifecycle = deps.lifecycle ?? new RunLifecycle(deps.db);
    this.hub = new RunEventHub(deps.pool, bus, deps.logger, { keepEvents: deps.settings.keepEvents }, deps.controlPool);
    this.hub.metrics = deps.metrics;
    this.queue = new RunQueue(this.lifecycle, bus, `worker-${randomUUID()}`, deps.settings.leaseMs);
    this.callbackFactories = [...(deps.callbackFactories ?? [])];
  }

  /** Open LangGraph storage and start listening for run events. */
  static async open(deps: RuntimeDeps): Promise<Runtime> {
    const storage = await openLangGraphStorage(deps.databaseUrl, deps.pool);
    const bus = deps.bus ?? new NotificationBus({ connectionString: deps.databaseUrl, pool: deps.pool, logger: deps.logger.child({ part: 'bus' }) });
    if (!deps.bus) await bus.start();
    const runtime = new Runtime(deps, storage, bus, !deps.bus);
    await runtime.hub.start();
    return runtime;
  }

  /**
   * A pool of workers executing this process's share of runs. Its lines say `part` (the runtime's
   * logger has its `component` already: pino writes a second one as a duplicate JSON key).
   */
  workers(): WorkerPool {
    return new WorkerPool(this, this.deps.settings, this.deps.logger.child({ part: 'worker' }));
  }

  /** The built agent of `agentId` at `revision` (reused while nothing it depends on changed). */
  async agentFor(workspaceId: string, agentId: string, revision: string): Promise<BuiltAgent> {
    const slot = `${workspaceId}/${agentId}`;
    // Fast path: the tree of this revision was read before, so only its tool servers and saved
    // model configurations need checking (none at all for an agent without either).
    const known = this.dependencies.get(slot);
    if (known && known.revision === revision) {
      const key = await this.cacheKey(workspaceId, known);
      const hit = this.cache.peek(slot, key);
      if (hit) return hit;
    }
    const tree = await this.deps.agents.loadTree(workspaceId, agentId, revision);
    const blueprint = blueprintOf(workspaceId, tree);
    const deps: AgentDependencies = {
      revision: tree.revision,
      urls: [...new Set([...blueprint.tools, ...blueprint.subagents.flatMap((s) => s.tools ?? [])].map((r) => normalizeServerUrl(r.mcpServerUrl)))].sort(),
      models: [blueprint.modelId, ...blueprint.subagents.map((s) => s.modelId ?? '')].filter((m) => m !== '' && !parseModelId(m)),
    };
    this.dependencies.set(slot, deps);
    const key = await this.cacheKey(workspaceId, deps);
    return this.cache.get(slot, key, () =>
      buildAgent(blueprint, {
        resolveModel: (modelId, ws) => this.resolveModel(modelId, ws),
        findServer: async (ws, url) => {
          const s = await this.deps.mcpServers.findByUrl(ws, url);
          return s ? { id: s.id, url: s.url, name: s.name, headers: s.headers, authType: s.authType, oauthProviderId: s.oauthProviderId, oauthMode: s.oauthMode } : undefined;
        },
        oauthTools: this.deps.oauth ? (ws) => oauthToolAccess(this.deps.oauth!, ws) : undefined,
        checkpointer: this.storage.checkpointer,
        store: this.storage.store,
        toolLimits: this.deps.settings.toolLimits,
        sandboxBackend: this.deps.sandboxes ? (owner) => this.sandboxBackend(owner) : undefined,
      }),
    );
  }

  /** The sandbox backend of an agent, and what its model is told about the sandbox. */
  private sandboxBackend(owner: Parameters<typeof sandboxBackend>[1]) {
    const s = this.deps.sandboxes!;
    const backend = sandboxBackend(s.service, owner, { timeoutSeconds: s.timeoutSeconds, maxOutputBytes: s.maxOutputBytes });
    const scope = owner.spec.scope === 'agent' ? 'shared by every thread of this agent' : 'of this conversation (thread)';
    const prompt = [
      '## Sandbox',
      `You work in an isolated Linux sandbox ${scope}. Run shell commands with the \`execute\` tool.`,
      `Your working directory is ${SANDBOX_WORKDIR}: keep your files there (use absolute paths such as ${SANDBOX_WORKDIR}/main.py with the file tools); they persist between commands and runs.`,
      s.service.driverName === 'kubernetes'
        ? `Everything outside ${SANDBOX_WORKDIR} and /tmp is read-only, and /tmp is emptied when the sandbox stops. ${
            owner.spec.policyIds.includes(ALLOW_NETWORK_POLICY) ? 'Public network addresses are reachable; private ones are not.' : 'There is no network access.'
          }`
        : 'The system (/usr, /etc) is read-only, /tmp is emptied after every command, and there is no network access.',
      `Each command may run ${s.timeoutSeconds} s at most, and only its first ${s.maxOutputBytes} bytes of output are kept.`,
      '/agent/ (your definition, read-only) and /memories/ are reachable with the file tools only, not from commands.',
    ].join('\n');
    return { backend, prompt, withWriter: withToolWriter };
  }

  /** What a built agent depends on besides its revision: registrations that can change under it. */
  private async cacheKey(workspaceId: string, deps: AgentDependencies): Promise<string> {
    const servers = await Promise.all(
      deps.urls.map(async (u) => {
        const s = await this.deps.mcpServers.findByUrl(workspaceId, u);
        // An OAuth-backed server's tools are listed once someone has authorized it: rebuild then.
        const grant =
          s && isOAuthBacked(s) && this.deps.oauth ? `:${(await this.deps.oauth.hasGrant(workspaceId, s)) ? 'granted' : 'none'}` : '';
        return `${u}@${s?.updatedAt.getTime() ?? '-'}${grant}`;
      }),
    );
    const models = await Promise.all(
      deps.models.map(async (name) => `${name}@${(await this.deps.modelConfigs.findByName(workspaceId, name))?.updatedAt.getTime() ?? '-'}`),
    );
    return [deps.revision, ...servers, ...models].join('|');
  }

  /**
   * Every name a tool of the agent at `revision` may have: its tools.json tools and its subagents'
   * (plain or with their server's name in front), and the built-in tools. Read from the tree alone:
   * no tool server is asked.
   */
  async toolNames(workspaceId: string, agentId: string, revision: string): Promise<ReadonlySet<string>> {
    const blueprint = blueprintOf(workspaceId, await this.deps.agents.loadTree(workspaceId, agentId, revision));
    return new Set([...BUILT_IN_TOOLS, ...possibleToolNames([...blueprint.tools, ...blueprint.subagents.flatMap((s) => s.tools ?? [])])]);
  }

  /**
   * The model the usage report counts a run of `agentId` at `revision` under when the run ended before
   * its agent was built (cancelled while queued or while being built, failed at start): the name its
   * built model reports, i.e. the part after the provider of the agent's own `model_id` or of the
   * saved configuration it names; the configuration's name when it no longer exists. Undefined when
   * the agent's tree cannot be read (the agent was deleted): the report then says `unknown`.
   */
  async usageModel(workspaceId: string, agentId: string, revision: string): Promise<string | undefined> {
    const modelId = await this.deps.agents.loadTree(workspaceId, agentId, revision).then(
      (tree) => tree.definition.runtime.model.model_id,
      () => undefined,
    );
    if (modelId === undefined) return undefined;
    const direct = parseModelId(modelId);
    if (direct) return direct.model;
    const saved = await this.deps.modelConfigs.findByName(workspaceId, modelId);
    return (saved && parseModelId(saved.modelId)?.model) ?? modelId;
  }

  /** A chat model for `<provider>:<model_id>` or the name of a saved model configuration. */
  async resolveModel(modelId: string, workspaceId: string) {
    const direct = parseModelId(modelId);
    if (direct) return resolveChatModel(direct, this.deps.settings.modelLimits);
    const saved = await this.deps.modelConfigs.resolve(workspaceId, modelId);
    if (!saved) throw new Error(`model "${modelId}" is neither <provider>:<model_id> nor the name of a saved model configuration`);
    const parsed = parseModelId(saved.modelId);
    if (!parsed) throw new Error(`saved model configuration "${modelId}" has an invalid model id`);
    const { base_url: baseUrl, ...params } = saved.parameters;
    const spec: ModelSpec = { ...parsed, params, baseUrl, apiKey: saved.apiKey };
    return resolveChatModel(spec, this.deps.settings.modelLimits);
  }

  /** What core services use of the runtime. */
  ports(): RuntimePorts {
    return {
      state: {
        ...checkpointStateReader(this.storage.checkpointer),
        rollback: async (threadId, runId) => {
          await rollbackRunCheckpoints(this.deps.pool, threadId, runId);
        },
        update: async ({ workspaceId, agentId, revision, threadId }, values, asNode) => {
          const agent = await this.agentFor(workspaceId, agentId, revision);
          const config = { configurable: { thread_id: threadId } };
          const current = ((await agent.graph.getState(config as never)).values as { messages?: BaseMessage[] } | undefined)?.messages ?? [];
          const problem = checkStateUpdate(values, asNode, Object.keys((agent.graph.graph as unknown as { nodes: Record<string, unknown> }).nodes), current);
          if (problem) throw invalidField(problem.loc, problem.msg);
          try {
            await agent.graph.updateState(config as never, values as never, asNode);
          } catch (error) {
            // What the checks above missed and LangGraph refuses before writing (an ambiguous node, say).
            if ((error as Error).name === 'InvalidUpdateError') throw invalidField(['values'], (error as Error).message.split('\n')[0]!);
            throw error;
          }
        },
        graph: async ({ workspaceId, agentId, revision }, xray) => {
          const agent = await this.agentFor(workspaceId, agentId, revision);
          return (await agent.graph.getGraphAsync({ xray })).toJSON() as Record<string, unknown>;
        },
      },
      store: this.storage.store,
      runs: {
        announce: () => this.queue.announce(),
        reserve: () => this.queue.reserve(),
        admit: () => this.queue.admissions.enter(),
        admitted: () => this.queue.admissions.idle(),
        subscribe: (runId, afterSeq, isOver, signal, known, watch) => this.hub.subscribe(runId, afterSeq, isOver, signal, known, watch),
        watch: (runId) => this.hub.watch(runId),
        cancel: async (runId) => {
          await Promise.all([this.queue.cancel(runId), this.hub.poke(runId)]);
        },
        usageModel: (run) => this.usageModel(run.workspaceId, run.agentId, run.revision),
        toolNames: (agent) => this.toolNames(agent.workspaceId, agent.agentId, agent.revision),
        resolveInterrupt: async ({ workspaceId, threadId, agentId }) => {
          // The revision of the run that paused: its graph holds the pending approval.
          const paused = await this.deps.db
            .selectFrom('runs')
            .select('revision')
            .where('thread_id', '=', threadId)
            .orderBy('created_at', 'desc')
            .limit(1)
            .executeTakeFirst();
          if (!paused) return false;
          return resolvePendingApproval(await this.agentFor(workspaceId, agentId, paused.revision), threadId);
        },
      },
    };
  }

  /** Stop listening and close storage (the database pool is closed by its owner). */
  async close(): Promise<void> {
    await this.cache.close();
    await this.hub.stop();
    if (this.ownsBus) await this.bus.stop();
    await this.storage.close();
  }
}
