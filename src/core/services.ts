// The dependency bag of core services, built once by the composition root.
import type { Db } from '../db/index.js';
import type { Logger } from '../logging.js';
import { ObjectStore } from '../repo/store.js';
import { AgentService } from './agents/service.js';
import type { SandboxPorts } from './agents/backend.js';
import { IntegrationService } from './integrations/service.js';
import { DeploymentService } from './deployments/service.js';
import type { CodeHosts, DriverRouting, TracingProjects } from './deployments/ports.js';
import { UploadService } from './deployments/uploads.js';
import { integrationCodeHosts } from './deployments/code-hosts.js';
import { McpServerService } from './mcp-servers/service.js';
import { ModelConfigService } from './model-configs/service.js';
import { OAuthProviderService } from './oauth/providers.js';
import { OAuthService } from './oauth/service.js';
import { AgentHealthService } from './agents/health.js';
import { RunService, type RunPorts } from './runs/service.js';
import { RunLifecycle } from './runs/lifecycle.js';
import { ScheduleService } from './schedules/service.js';
import { WebhookService } from './webhooks/service.js';
import type { Cipher } from './secrets/cipher.js';
import type { KeyCache } from './workspaces/key-cache.js';
import { ThreadService } from './threads/service.js';
import { ThreadSandboxService } from './threads/sandbox.js';
import { UsageService } from './usage/service.js';
import type { ThreadStateReader } from './threads/state.js';
import { TracingService } from './tracing/service.js';
import type { TraceExporter } from '../tracing/export/exporter.js';
import { TraceStore } from '../tracing/store.js';
import { WorkspaceService } from './workspaces/service.js';
import type { EgressGuard } from '../net/egress.js';
import { laptopEgress } from './egress.js';
import { type LocalRepoPolicy, NO_LOCAL_REPOS } from './local-repos.js';
import type { K8sPolicy } from './deployments/k8s-policy.js';
import { ConsoleSessionService } from './console/sessions.js';
import { StoreService, type StorePort } from './store/service.js';

/** Every core service. */
export interface Services {
  workspaces: WorkspaceService;
  mcpServers: McpServerService;
  tracing: TracingService;
  modelConfigs: ModelConfigService;
  agents: AgentService;
  /** The hosted SDK's agent health check (its tool servers probed). */
  agentHealth: AgentHealthService;
  /** Git objects of agent repositories (read by the smart-HTTP endpoint). */
  gitObjects: ObjectStore;
  oauthProviders: OAuthProviderService;
  oauth: OAuthService;
  /** Code-host integrations; `get(workspaceId, id)` resolves credentials for deployments. */
  integrations: IntegrationService;
  threads: ThreadService;
  runs: RunService;
  /** The one owner of run and thread status (the runtime's workers report to the same instance). */
  runLifecycle: RunLifecycle;
  usage: UsageService;
  deployments: DeploymentService;
  deploymentUploads: UploadService;
  /** A thread's sandbox (status, reset). */
  sandboxes: ThreadSandboxService;
  /** Console sign-in sessions (cookie ↔ API key). */
  consoleSessions: ConsoleSessionService;
  /** The LangGraph store (agents' /memories/), scoped to the caller's workspace. */
  store: StoreService;
  schedules: ScheduleService;
  webhooks: WebhookService;
}

/** What threads and runs need of the agent runtime (src/runtime). */
export interface RuntimePorts {
  state: ThreadStateReader;
  runs: RunPorts;
  /** LangGraph's long-term store, where agents keep /memories/. */
  store: StorePort;
}

/** What services are built from. */
export interface ServiceDeps {
  db: Db;
  /** A small pool of its own for run status and leases (the run engine's control plane); `db` without. */
  controlDb?: Db | undefined;
  cipher: Cipher;
  logger: Logger;
  /** Cache of authenticated keys (server processes); operator commands go without. */
  keyCache?: KeyCache;
  /** Hangar's public base URL (OAuth redirect URIs); known only once the server listens, hence a function. */
  publicUrl?: () => string;
  /** The running agent runtime; without it (operator commands) threads and runs refuse to work. */
  runtime?: RuntimePorts | undefined;
  /** Deployments: which driver serves which source, and the other domains they use when present. */
  deploy?: { routing: DriverRouting; codeHosts?: CodeHosts; tracing?: TracingProjects; k8sPolicy?: K8sPolicy; templates?: () => Promise<string[]> };
  /** Where traces go besides Hangar's own store (OTLP, LangSmith-compatible); none by default. */
  traceExporters?: TraceExporter[];
  /** The sandbox service (src/sandbox); without it the sandbox endpoints answer 503. */
  sandboxes?: SandboxPorts | undefined;
  /** The outbound policy for user-supplied URLs (default: the laptop policy). */
  egress?: EgressGuard;
  /** Which host directories may hold repositories (default: none). */
  localRepos?: LocalRepoPolicy;
}

/** Build the services. */
export function createServices(deps: ServiceDeps): Services {
  const egress = deps.egress ?? laptopEgress();
  const localRepos = deps.localRepos ?? NO_LOCAL_REPOS;
  const oauthProviders = new OAuthProviderService(deps.db, deps.cipher, egress);
  const mcpServers = new McpServerService(deps.db, deps.cipher, oauthProviders, egress);
  const modelConfigs = new ModelConfigService(deps.db, deps.cipher, egress);
  const gitObjects = new ObjectStore(deps.db);
  const agents = new AgentService(deps.db, gitObjects, mcpServers, modelConfigs);
  const runtime = deps.runtime ?? offlineRuntime();
  const runLifecycle = new RunLifecycle(deps.controlDb ?? deps.db);
  const threads = new ThreadService(deps.db, agents, runtime.state);
  const integrations = new IntegrationService(deps.db, deps.cipher, egress.fetch, { egress, localRepos });
  const webhooks = new WebhookService(deps.db, deps.cipher, egress);
  const tracing = new TracingService({ store: new TraceStore(deps.db), mcpServers, exporters: deps.traceExporters ?? [], logger: deps.logger });
  const workspaces = new WorkspaceService(deps.db, deps.keyCache);
  const oauth = new OAuthService(deps.db, deps.cipher, oauthProviders, {
    logger: deps.logger,
    publicUrl: deps.publicUrl ?? (() => 'http://127.0.0.1:8124'),
    fetch: egress.fetch,
    egress,
  });
  return {
    workspaces,
    consoleSessions: new ConsoleSessionService(deps.db, workspaces),
    store: new StoreService(() => runtime.store),
    mcpServers,
    modelConfigs,
    agents,
    agentHealth: new AgentHealthService({ agents, mcpServers, oauth }),
    gitObjects,
    threads,
    runs: new RunService(deps.controlDb ?? deps.db, runtime.runs, runtime.state, runLifecycle),
    runLifecycle,
    usage: new UsageService(deps.db),
    oauthProviders,
    oauth,
    integrations,
    deployments: new DeploymentService({
      db: deps.db,
      cipher: deps.cipher,
      logger: deps.logger,
      routing: deps.deploy?.routing ?? { driverFor: () => undefined },
      codeHosts: deps.deploy?.codeHosts ?? integrationCodeHosts(integrations),
      tracing: deps.deploy?.tracing ?? tracing,
      egress,
      localRepos,
      k8sPolicy: deps.deploy?.k8sPolicy,
      templates: deps.deploy?.templates,
    }),
    deploymentUploads: new UploadService(deps.db),
    tracing,
    sandboxes: new ThreadSandboxService(threads, deps.sandboxes),
    schedules: new ScheduleService(deps.db, agents, (url) => webhooks.check(url)),
    webhooks,
  };
}

/**
 * Ports that forward to a runtime opened after the services (the runtime itself is built from the
 * agent, tool-server and model services): the composition root builds the services once, opens the
 * runtime with them, then `bind`s it. Calls before that are refused.
 */
export function deferredRuntime(): { ports: RuntimePorts; bind(ports: RuntimePorts): void } {
  let bound: RuntimePorts = offlineRuntime();
  // Forward every method, including ones added to the port interfaces later.
  const forward = <K extends keyof RuntimePorts>(key: K): RuntimePorts[K] =>
    new Proxy({} as RuntimePorts[K], {
      get: (_target, method) => (...args: unknown[]) => (bound[key] as unknown as Record<string | symbol, (...a: unknown[]) => unknown>)[method]!(...args),
    });
  return {
    bind: (ports) => {
      bound = ports;
    },
    ports: { state: forward('state'), runs: forward('runs'), store: forward('store') },
  };
}

function offlineRuntime(): RuntimePorts {
  const refuse = (): never => {
    throw new Error('the agent runtime is not running in this process');
  };
  return { state: { current: refuse, at: refuse, history: refuse, rollback: refuse, copy: refuse, update: refuse, graph: refuse }, runs: { announce: refuse, admit: () => () => {}, admitted: async () => {}, subscribe: refuse, cancel: refuse, resolveInterrupt: refuse }, store: { get: refuse, put: refuse, delete: refuse, search: refuse, listNamespaces: refuse } };
}
